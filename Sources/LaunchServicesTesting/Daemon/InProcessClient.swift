#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore
import NIOEmbedded

/// A peer of an `InProcessDaemon` (what `lsopen` or `lsctl` would be), on an embedded
/// channel: it sends requests and reads the daemon's answers once the daemon has settled.
public final class InProcessClient {
    private let channel: EmbeddedChannel
    private unowned let daemon: InProcessDaemon
    private var nextID: UInt32 = 1
    private var frames = FrameBuffer()
    private var inbox: [Envelope] = []
    /// The identity the daemon gave it in `welcome`.
    public private(set) var identity: String?

    init(channel: EmbeddedChannel, daemon: InProcessDaemon) {
        self.channel = channel
        self.daemon = daemon
    }

    /// The frames from the daemon that did not decode, with the decoder's reason: a test
    /// can require none (they are reported here, never dropped in silence).
    public var undecodableFrames: [String] { frames.failures }

    /// Whether the daemon still keeps the connection open.
    public var isConnected: Bool { channel.isActive }

    /// Sends a request without waiting; returns its request id.
    @discardableResult
    public func send(_ message: Message) -> UInt32 {
        let id = nextID
        nextID += 1
        sendRaw(Envelope(id: id, message))
        return id
    }

    /// Sends an envelope as given (any id, even a bad one).
    public func sendRaw(_ envelope: Envelope) {
        guard channel.isActive else { return }
        _ = try? channel.writeInbound(channel.allocator.buffer(bytes: Frame.encode(envelope)))
    }

    /// Lets the daemon settle, then takes the answer to request `id`, if it came.
    public func answer(to id: UInt32) -> Message? {
        daemon.settle()
        collect()
        guard let index = inbox.firstIndex(where: { $0.id == id }) else { return nil }
        return inbox.remove(at: index).message
    }

    /// Everything received and not yet taken (connection-level messages included).
    public func received() -> [Envelope] {
        daemon.settle()
        collect()
        defer { inbox.removeAll() }
        return inbox
    }

    /// Opens a URL and returns the outcome once the daemon has settled; nil while the open
    /// is still unanswered (an app hangs: advance the clock).
    public func open(_ url: String, annotation: PropertyListValue? = nil) -> OpenOutcome? {
        let id = send(.open(url: url, annotation: annotation))
        return outcome(of: id)
    }

    /// The outcome of open request `id`, if it has been answered.
    public func outcome(of id: UInt32) -> OpenOutcome? {
        guard case .openResult(let outcome) = answer(to: id) else { return nil }
        return outcome
    }

    /// Stops reading, as a peer that never reads its replies: from now on what the daemon
    /// writes to it stays queued on the daemon's side (`unreadBytes`), as in a socket buffer
    /// nobody empties, until the daemon's `connections.maximumQueuedOutputBytes` ends it.
    public func stopReading() {
        try? channel.pipeline.syncOperations.addHandler(UnflushedWrites(), position: .first)
    }

    /// What the daemon wrote and this peer has not read (since `stopReading`), in bytes.
    public var unreadBytes: Int {
        (try? channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
    }

    /// Closes the connection, as a tool that exits would.
    public func disconnect() {
        channel.close(promise: nil)
        daemon.settle()
    }

    func greet() {
        let hello = Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "in-process-client"))
        sendRaw(hello)
        daemon.settle()
        collect()
        if let index = inbox.firstIndex(where: { if case .welcome = $0.message { return true } else { return false } }),
           case .welcome(_, let identity) = inbox.remove(at: index).message {
            self.identity = identity
        }
    }

    private func collect() {
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) {
            frames.append(buffer)
        }
        while let envelope = frames.next() { inbox.append(envelope) }
    }
}

/// Keeps the daemon's writes on its side of an embedded channel: flushes go no further, so
/// the channel's pending bytes grow as they would for a socket whose peer never reads.
private final class UnflushedWrites: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny

    func flush(context: ChannelHandlerContext) {}
}
