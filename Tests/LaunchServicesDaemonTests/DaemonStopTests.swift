import Dispatch
import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import Testing

/// Stopping a daemon with a state folder: its databases are closed after the work under way
/// has saved, and within a bound when a queue does not answer.
@Suite("Daemon stop: the state databases")
struct DaemonStopTests {
    /// A loaded daemon on its own loop, with an empty apps folder and a state folder in
    /// `folder`; `body` runs with it, then the loop is shut down.
    static func withDaemon(closeTimeout: Duration = .seconds(5), _ body: (LaunchServicesDaemon, NIOLockedValueBox<[String]>) async throws -> Void) async throws {
        let folder = try TemporaryFolder(prefix: "ls-stop")
        defer { _ = folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path + "/apps", withIntermediateDirectories: true)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let lines = NIOLockedValueBox<[String]>([])
        var configuration = DaemonConfiguration(appsFolders: [folder.path + "/apps"])
        configuration.watchAppsFolders = false
        let daemon = LaunchServicesDaemon(configuration: configuration, socketPath: folder.path + "/socket", stateFolder: folder.path + "/state", activatedSocket: nil,
                                          launcher: AppLauncher(socketPath: folder.path + "/socket", output: nil), loop: group.next(),
                                          logger: Logger(label: "stop-tests") { _ in RecordingLogHandler(lines: lines, logLevel: .info) },
                                          databaseCloseTimeout: closeTimeout)
        try await daemon.loadRegistry()
        do {
            try await body(daemon, lines)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    /// Waits at most `seconds` for `done` to be set; whether it was.
    static func finished(_ done: NIOLockedValueBox<Bool>, within seconds: Int) async throws -> Bool {
        for _ in 0..<(seconds * 50) {
            if done.withLockedValue({ $0 }) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return done.withLockedValue { $0 }
    }

    @Test("a rescan under way when the daemon stops is saved before the registry closes: the stop logs no failure")
    func rescanUnderWay() async throws {
        // The close's bound well above the default 5 s: what is tested is the order of the
        // save and the close, and on a loaded machine the scan alone once took longer than
        // 5 s, which read as a failure of the order (the bound is `busyQueueBounded`'s).
        try await Self.withDaemon(closeTimeout: .seconds(25)) { daemon, lines in
            // The rescan's scan waits behind a job the test holds on the files queue.
            let gate = DispatchSemaphore(value: 0)
            daemon.workers.files.async { gate.wait() }
            try await daemon.loop.submit { daemon.rooms.value.registry.rescan { _ in } }.get()
            let done = NIOLockedValueBox(false)
            let stopping = Task.detached {
                await daemon.shutdown()
                done.withLockedValue { $0 = true }
            }
            // Time for a stop that does not wait for the rescan to queue its close behind the
            // scan (then the rescan's save came after the close). A stop that waits is
            // correct whatever the timing.
            try await Task.sleep(for: .milliseconds(300))
            gate.signal()
            #expect(try await Self.finished(done, within: 30))
            await stopping.value
            let failures = lines.withLockedValue { $0 }.filter { $0.contains("could not") }
            #expect(failures.isEmpty, "\(failures)")
        }
    }

    @Test("a files queue that stays busy: the stop ends after databaseCloseTimeout and names the file it could not close")
    func busyQueueBounded() async throws {
        try await Self.withDaemon(closeTimeout: .milliseconds(200)) { daemon, lines in
            let gate = DispatchSemaphore(value: 0)
            daemon.workers.files.async { gate.wait() }
            let done = NIOLockedValueBox(false)
            let stopping = Task.detached {
                await daemon.shutdown()
                done.withLockedValue { $0 = true }
            }
            let ended = try await Self.finished(done, within: 30)
            gate.signal()
            await stopping.value
            #expect(ended, "the stop waited for the busy queue")
            let named = lines.withLockedValue { $0 }.filter { $0.contains("could not close") }
            let registry = named.filter { $0.contains("registry.sqlite within") }
            #expect(registry.count == 1, "\(named)")
            #expect(registry.first?.contains("launchservicesd.files is still busy") == true)
            // The pasteboard store's queue is not held, but with a 200 ms timeout a loaded
            // machine (the full suite on two cores) may miss it too; it is named as its own.
            #expect(named.allSatisfy { $0.contains("registry.sqlite within") || $0.contains("pasteboard.sqlite within 0.2 seconds of stopping: launchservicesd.pasteboard-store is still busy") },
                    "\(named)")
        }
    }
}
