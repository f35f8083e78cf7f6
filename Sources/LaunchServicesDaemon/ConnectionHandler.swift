import CLaunchServicesShim
import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore
import NIOPosix

/// The channel end of a connection: turns frames into envelopes for the daemon and reports
/// the connection's life. All protocol decisions are the daemon's.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let daemon: LaunchServicesDaemon
    private let kind: ClientConnection.Kind
    private var connection: ClientConnection?

    init(daemon: LaunchServicesDaemon, kind: ClientConnection.Kind) {
        self.daemon = daemon
        self.kind = kind
    }

    func channelActive(context: ChannelHandlerContext) {
        let peer = kind == .socket ? Self.peerCredentials(context.channel) : nil
        connection = daemon.connectionOpened(channel: context.channel, kind: kind, peer: peer)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection else { return }
        let body = unwrapInboundIn(data)
        let decoded = body.withUnsafeReadableBytes { raw -> Result<Envelope, WireError> in
            do throws(WireError) {
                return .success(try Envelope.decode(raw))
            } catch {
                return .failure(error)
            }
        }
        switch decoded {
        case .success(let envelope):
            daemon.received(envelope, from: connection)
        case .failure(let error):
            daemon.protocolViolation(error.description, on: connection)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        daemon.flushPending()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection { daemon.connectionClosed(connection) }
        connection = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let connection {
            let text = (error as? WireError)?.description ?? "\(error)"
            daemon.protocolViolation(text, on: connection)
        } else {
            context.close(promise: nil)
        }
    }

    /// SO_PEERCRED through NIO's socket-option access. On the channel's loop the option is
    /// read at once and the future is already fulfilled, so the callback runs inline.
    static func peerCredentials(_ channel: Channel) -> (pid: Int32, uid: UInt32)? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<ls_ucred> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        var result: (pid: Int32, uid: UInt32)?
        future.assumeIsolated().whenSuccess { cred in result = (cred.pid, cred.uid) }
        return result
    }
}
