#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesProtocol
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// The limits that do not depend on who a peer is are met before its ancestry is read
/// (a walk of `/proc`), so a flood at them costs no walk per refused connection.
@Suite("Connection refusals before the peer is identified")
struct RefusalBeforeIdentityTests {
    let loop = EmbeddedEventLoop()
    let daemon: LaunchServicesDaemon

    init() {
        var configuration = DaemonConfiguration(appsFolders: [])
        configuration.watchAppsFolders = false
        configuration.connectionLimits.maximumPerUser = 4
        configuration.connectionLimits.maximumPerProcess = 2
        configuration.connectionLimits.maximumPerApp = 4
        configuration.connectionLimits.reservedForFirstConnections = 0
        daemon = LaunchServicesDaemon(configuration: configuration, socketPath: "/unused/launchservicesd.socket", loop: loop,
                                      logger: Logger(label: "refusal-tests") { _ in SwiftLogNoOpLogHandler() })
    }

    /// A socket peer of pid `pid`, connected.
    func connect(pid: Int32) -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        _ = daemon.serve(channel, peer: PeerCredentials(pid: pid, uid: getuid()))
        _ = channel.connect(to: try! SocketAddress(unixDomainSocketPath: "/unused/client"))
        loop.run()
        return channel
    }

    /// The failure the daemon wrote to a refused peer, if it wrote one.
    func refusal(_ channel: EmbeddedChannel) -> OpenError? {
        var bytes: [UInt8] = []
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        guard bytes.count > Frame.headerLength, case .failure(let error)? = try? Envelope.decode(Array(bytes[Frame.headerLength...])).message else { return nil }
        return error
    }

    @Test("at the user's limit, new peers are refused naming connections.maximumPerUser, and no ancestry is read for them")
    func userLimitFirst() {
        var identified: [Int32] = []
        daemon.rooms.value.connectionService.peerOrigin = { identified.append($0); return .user }
        let held = (1...4).map { connect(pid: 1000 + $0) }
        #expect(identified == [1001, 1002, 1003, 1004])
        #expect(held.allSatisfy { refusal($0) == nil })
        for pid: Int32 in 2001...2003 {
            let error = refusal(connect(pid: pid))
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("connections.maximumPerUser") == true, "\(String(describing: error))")
        }
        #expect(identified == [1001, 1002, 1003, 1004], "a refused peer's ancestry was read")
    }

    @Test("a process at its share is refused naming connections.maximumPerProcess, and its ancestry is not read again")
    func processShareFirst() {
        var identified: [Int32] = []
        daemon.rooms.value.connectionService.peerOrigin = { identified.append($0); return .user }
        #expect(refusal(connect(pid: 3001)) == nil)
        #expect(refusal(connect(pid: 3001)) == nil)
        let error = refusal(connect(pid: 3001))
        #expect(error?.message.contains("connections.maximumPerProcess") == true, "\(String(describing: error))")
        #expect(identified == [3001, 3001])
    }
}
