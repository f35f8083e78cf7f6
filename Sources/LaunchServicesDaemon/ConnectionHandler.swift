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

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            if let connection {
                daemon.peerFinishedSending(connection)
            } else {
                context.close(promise: nil)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        daemon.flushPending()
        context.fireChannelReadComplete()
    }

    /// Backpressure: while the peer leaves a megabyte of replies unread, its requests are
    /// not read either (they wait in the kernel's socket buffer, and then in the peer).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        context.channel.setOption(ChannelOptions.autoRead, value: writable).whenSuccess {
            if writable { context.read() }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection { daemon.connectionClosed(connection) }
        connection = nil
        context.fireChannelInactive()
    }

    /// Bad bytes (a frame the decoder refused) are the peer's protocol violation and are
    /// answered as one; an I/O error (the peer reset the connection) only ends it.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let connection else {
            context.close(promise: nil)
            return
        }
        if let wire = error as? WireError {
            daemon.protocolViolation(wire.description, on: connection)
        } else if error is IOError || error is ChannelError {
            daemon.logger.debug("connection ended: \(error)", metadata: ["peer": "\(connection.identity)"])
            context.close(promise: nil)
        } else {
            daemon.protocolViolation("\(error)", on: connection)
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
