import CLaunchServicesShim
import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore
import NIOPosix

/// Who is at the other end of a socket connection, as the kernel says (SO_PEERCRED).
package struct PeerCredentials: Sendable, Equatable {
    package var pid: Int32
    package var uid: UInt32
    package init(pid: Int32, uid: UInt32) {
        self.pid = pid
        self.uid = uid
    }
}

/// All a connection's handler may tell the daemon, and all it may ask of it: the daemon's
/// narrow face toward the network edge. The handler never reaches further in.
protocol ConnectionEvents: AnyObject {
    /// A connection became active; nil when it is refused (the daemon has closed it).
    func connectionOpened(channel: Channel, kind: ClientConnection.Kind, peer: PeerCredentials?) -> ClientConnection?
    func received(_ envelope: Envelope, from connection: ClientConnection)
    func protocolViolation(_ text: String, on connection: ClientConnection)
    func peerFinishedSending(_ connection: ClientConnection)
    func connectionEnded(_ connection: ClientConnection, error: Error)
    func connectionClosed(_ connection: ClientConnection)
    /// The end of a batch of reads: write out what the batch produced (at the end of the
    /// loop's tick, so the reads of every channel ready in it share one write per peer).
    func readBatchEnded()
}

/// The channel end of a connection: splits the bytes read into frames (`FrameReader`),
/// turns frames into envelopes for the daemon and reports the connection's life. All
/// protocol decisions are the daemon's.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let events: any ConnectionEvents
    private let kind: ClientConnection.Kind
    /// Given by the testing kit, whose channels have no socket to ask.
    private let givenPeer: PeerCredentials?
    private var connection: ClientConnection?
    /// The daemon was told of this connection (`opened`), whether or not it took it.
    private var hasOpened = false
    private var frames: FrameReader
    /// Frames are being handed on (`readFrames`): bytes read meanwhile (a re-entrant read)
    /// wait behind them, and the loop already running splits them.
    private var readingFrames = false
    /// The input ended (its end, or the channel's): the frames complete by then were handed
    /// on, and later bytes are not split.
    private var inputEnded = false

    init(events: any ConnectionEvents, kind: ClientConnection.Kind, peer: PeerCredentials? = nil, maximumFrameLength: Int) {
        self.events = events
        self.kind = kind
        givenPeer = peer
        frames = FrameReader(maximumLength: maximumFrameLength)
    }

    /// A channel made ahead of its launch (`PreparedAppConnection`) is active before this
    /// handler is added to it, and tells it no more: the connection opens now.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context)
        context.fireChannelActive()
    }

    /// Once per handler, whichever of `handlerAdded` and `channelActive` sees the channel active first.
    private func opened(_ context: ChannelHandlerContext) {
        guard !hasOpened else { return }
        hasOpened = true
        let peer = kind == .socket ? givenPeer ?? Self.peerCredentials(context.channel) : nil
        connection = events.connectionOpened(channel: context.channel, kind: kind, peer: peer)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if let failure = frames.failure {
            // As NIO's ByteToMessageHandler reported bytes that follow a refused frame.
            errorCaught(context: context, error: ByteToMessageDecoderError.dataReceivedInErrorState(failure, bytes))
            return
        }
        frames.append(bytes)
        guard !inputEnded else { return }
        readFrames(context: context)
    }

    /// Hands on every whole frame buffered; a refused length is the peer's protocol
    /// violation (`errorCaught`). Re-entered (a frame handed on led to another read, or to
    /// the end of input), it leaves the bytes to the loop already running.
    private func readFrames(context: ChannelHandlerContext) {
        guard !readingFrames else { return }
        readingFrames = true
        defer { readingFrames = false }
        do {
            while let body = try frames.next() { received(body) }
        } catch {
            errorCaught(context: context, error: error)
        }
    }

    /// The input ended: the frames complete by then are handed on before the end is.
    private func inputEnding(context: ChannelHandlerContext) {
        guard !inputEnded else { return }
        inputEnded = true
        readFrames(context: context)
    }

    private func received(_ body: ByteBuffer) {
        guard let connection else { return }
        // Decoded straight into a constant: held in a `Result` and matched out of it, the
        // envelope was copied once more, and destroyed twice, per request.
        let envelope: Envelope
        do throws(WireError) {
            envelope = try body.withUnsafeReadableBytes { raw throws(WireError) in try Envelope.decode(raw) }
        } catch {
            events.protocolViolation(error.description, on: connection)
            return
        }
        events.received(envelope, from: connection)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputEnding(context: context)
            if let connection {
                events.peerFinishedSending(connection)
            } else {
                context.close(promise: nil)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        events.readBatchEnded()
        context.fireChannelReadComplete()
    }

    /// Backpressure: while the peer leaves a megabyte of replies unread, its requests are
    /// not read either (they wait in the kernel's socket buffer, and then in the peer).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        context.channel.setOption(ChannelOptions.autoRead, value: writable).assumeIsolated().whenSuccess {
            if writable { context.read() }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        inputEnding(context: context)
        if let connection { events.connectionClosed(connection) }
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
            events.protocolViolation(wire.description, on: connection)
        } else if error is IOError || error is ChannelError {
            events.connectionEnded(connection, error: error)
        } else {
            events.protocolViolation("\(error)", on: connection)
        }
    }

    /// SO_PEERCRED through NIO's socket-option access. On the channel's loop the option is
    /// read at once and the future is already fulfilled, so the callback runs inline.
    static func peerCredentials(_ channel: Channel) -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<ls_ucred> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        var result: PeerCredentials?
        future.assumeIsolated().whenSuccess { cred in result = PeerCredentials(pid: cred.pid, uid: cred.uid) }
        return result
    }
}
