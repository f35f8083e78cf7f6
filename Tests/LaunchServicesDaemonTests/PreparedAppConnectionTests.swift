import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
@testable import LaunchServicesDaemon
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

/// The app's connection made ahead of its launch (`PreparedAppConnection`): its handler is
/// added to a channel already active, and the supervisor keeps one ready for the next launch.
@Suite("A connection prepared ahead of its launch")
struct PreparedAppConnectionTests {
    /// Counts what the handler tells the daemon of the connection's life.
    final class Recorder: ConnectionEvents {
        var opened = 0
        var closed = 0
        var received: [UInt32] = []
        func connectionOpened(channel: Channel, kind: ClientConnection.Kind, peer: PeerCredentials?) -> ClientConnection? {
            opened += 1
            return ClientConnection(channel: channel, kind: kind, identity: "test")
        }
        func received(_ envelope: Envelope, from connection: ClientConnection) { received.append(envelope.id) }
        func protocolViolation(_ text: String, on connection: ClientConnection) {}
        func peerFinishedSending(_ connection: ClientConnection) {}
        func connectionEnded(_ connection: ClientConnection, error: Error) {}
        func connectionClosed(_ connection: ClientConnection) { closed += 1 }
        func readBatchEnded() {}
    }

    func handler(_ recorder: Recorder) -> ConnectionHandler {
        ConnectionHandler(events: recorder, kind: .app("a"), maximumFrameLength: 64)
    }

    @Test("a handler added to a channel already active opens the connection at once, and only once; its frames and its end reach the daemon")
    func addedToAnActiveChannel() throws {
        let recorder = Recorder()
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/x")).wait()
        try channel.pipeline.syncOperations.addHandler(handler(recorder))
        #expect(recorder.opened == 1)
        channel.pipeline.fireChannelActive()
        #expect(recorder.opened == 1)
        try channel.writeInbound(channel.allocator.buffer(bytes: Frame.encode(Envelope(id: 7, .query(topic: "status")))))
        #expect(recorder.received == [7])
        _ = try channel.finish()
        #expect(recorder.closed == 1)
    }

    @Test("a handler added before the channel is active opens the connection when it becomes active, once")
    func addedBeforeActivation() throws {
        let recorder = Recorder()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler(recorder))
        #expect(recorder.opened == 0)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/x")).wait()
        #expect(recorder.opened == 1)
        _ = try channel.finish()
        #expect(recorder.closed == 1)
    }

    /// Hands each launch's connection to the test and starts nothing.
    final class RecordingLauncher: AppLaunching {
        let given = Mutex<[Channel?]>([])
        let prepared = Mutex(0)
        /// Whether a launch without a prepared connection fails (as no real one does: it
        /// makes its own socketpair).
        let requiresConnection: Bool

        init(requiresConnection: Bool = true) {
            self.requiresConnection = requiresConnection
        }

        func prepareConnection(on loop: EventLoop) -> EventLoopFuture<PreparedAppConnection>? {
            prepared.withLock { $0 += 1 }
            return PreparedAppConnection.make(on: loop)
        }

        func launch(_ bundle: AppBundle, connection: PreparedAppConnection?) throws(AppLauncher.SpawnError) -> any LaunchedProcess {
            let channel = connection?.channel
            given.withLock { $0.append(channel) }
            guard let connection else {
                if requiresConnection { throw AppLauncher.SpawnError(description: "no connection prepared") }
                return QuietProcess(bundleID: bundle.id)
            }
            // Nothing here reads it: closed, as a launch that failed would.
            connection.discard()
            return QuietProcess(bundleID: bundle.id)
        }
    }

    /// A launched process that records when its output starts being heard.
    final class QuietProcess: LaunchedProcess {
        let bundleID: String
        let pid: Int32 = 1
        let heardAt = Mutex<ContinuousClock.Instant?>(nil)
        init(bundleID: String) { self.bundleID = bundleID }
        func signal(_ sig: Int32) {}
        func watchExit(_ onExit: @escaping @Sendable (LaunchServicesCore.ExitStatus) -> Void) {}
        func connect(on loop: EventLoop, initialize: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Channel> {
            loop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        func hearOutput() { heardAt.withLock { $0 = .now } }
    }

    @Test("the supervisor hands a launch the connection prepared ahead, already a channel; 10 ms later hears the app's output and prepares the next; and closes the one it holds when stopping")
    func supervisorKeepsOneReady() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let launcher = RecordingLauncher()
        let supervisor = try loop.submit {
            NIOLoopBound(ProcessSupervisor(loop: loop, launcher: launcher, logger: Logger(label: "prepared") { _ in SwiftLogNoOpLogHandler() }), eventLoop: loop)
        }.wait()
        func held() throws -> Channel? { try loop.submit { supervisor.value.prepared?.channel }.wait() }
        func waitForOne() throws -> Channel {
            let by = Date().addingTimeInterval(10)
            while Date() < by {
                if let channel = try held() { return channel }
                usleep(1_000)
            }
            throw HarnessFailure("no connection was prepared within 10 s")
        }

        try loop.submit { supervisor.value.prepareConnection(after: .zero) }.wait()
        let first = try waitForOne()
        #expect(first.isActive)
        let bundle = AppBundle(id: "a", name: "a", path: "/nonexistent/a.app", executable: "a", schemes: [])
        let launchedAt = ContinuousClock.now
        let process = try #require(try loop.submit { try supervisor.value.launch(bundle) }.wait() as? QuietProcess)
        #expect(process.heardAt.withLock { $0 } == nil, "the app's output was heard as it launched")
        let given = launcher.given.withLock { $0 }
        #expect(given.count == 1)
        #expect(given.first ?? nil === first, "the launch was not given the connection prepared ahead")
        #expect(try held() == nil, "the connection given to the launch is still held")

        let second = try waitForOne()
        #expect(second !== first)
        let heardAt = try #require(process.heardAt.withLock { $0 }, "the app's output was never heard")
        #expect(heardAt - launchedAt >= .milliseconds(10), "the app's output was heard \(heardAt - launchedAt) after the launch")
        #expect(launcher.prepared.withLock { $0 } == 2)
        try loop.submit { supervisor.value.beginStopping() }.wait()
        #expect(try held() == nil)
        try second.closeFuture.wait()
        // Stopping also ends the preparing: a later launch gets none.
        try loop.submit { supervisor.value.prepareConnection(after: .zero) }.wait()
        usleep(20_000)
        #expect(try held() == nil)
        #expect(launcher.prepared.withLock { $0 } == 2)
    }
}

extension PreparedAppConnectionTests {
    @Test("launches closer together than the settling time: each app's output is heard no sooner than 10 ms after its own launch, every one is heard, and one connection is prepared after them")
    func launchesWhileSettling() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let launcher = RecordingLauncher(requiresConnection: false)
        let supervisor = try loop.submit {
            NIOLoopBound(ProcessSupervisor(loop: loop, launcher: launcher, logger: Logger(label: "settling") { _ in SwiftLogNoOpLogHandler() }), eventLoop: loop)
        }.wait()
        var launched: [(at: ContinuousClock.Instant, process: QuietProcess)] = []
        for name in ["a", "b", "c"] {
            let bundle = AppBundle(id: name, name: name, path: "/nonexistent/\(name).app", executable: name, schemes: [])
            let at = ContinuousClock.now
            let process = try #require(try loop.submit { try supervisor.value.launch(bundle) }.wait() as? QuietProcess)
            launched.append((at, process))
            usleep(3_000)
        }
        let by = ContinuousClock.now + .seconds(10)
        while launched.contains(where: { $0.process.heardAt.withLock { $0 } == nil }), ContinuousClock.now < by { usleep(1_000) }
        for (at, process) in launched {
            let heardAt = try #require(process.heardAt.withLock { $0 }, "\(process.bundleID)'s output was never heard")
            #expect(heardAt - at >= .milliseconds(10), "\(process.bundleID)'s output was heard \(heardAt - at) after its launch")
        }
        let prepared = try loop.submit { supervisor.value.prepared != nil }.wait()
        #expect(prepared, "no connection was prepared once the launches settled")
        try loop.submit { supervisor.value.beginStopping() }.wait()
    }
}

extension PreparedAppConnectionTests {
    @Test("a loop that shuts down while a launch settles: the app's output is heard then, and no connection is made")
    func shutdownWhileSettling() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let launcher = RecordingLauncher(requiresConnection: false)
        let supervisor = try loop.submit {
            // Settling long after the shutdown: however late the shutdown runs on a loaded
            // machine, the launch has not settled by itself.
            NIOLoopBound(ProcessSupervisor(loop: loop, launcher: launcher, logger: Logger(label: "shutdown") { _ in SwiftLogNoOpLogHandler() }, settling: .seconds(600)), eventLoop: loop)
        }.wait()
        let bundle = AppBundle(id: "a", name: "a", path: "/nonexistent/a.app", executable: "a", schemes: [])
        let process = try #require(try loop.submit { try supervisor.value.launch(bundle) }.wait() as? QuietProcess)
        try group.syncShutdownGracefully()
        #expect(process.heardAt.withLock { $0 } != nil, "the app's output was never heard")
        #expect(launcher.prepared.withLock { $0 } == 0, "a connection was made while the loop shut down")
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
