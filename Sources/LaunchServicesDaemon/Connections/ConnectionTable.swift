import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Owns the open connections: every peer by channel, the apps' connections by bundle id,
/// the socket peers' shares (`ConnectionShares`: per process, per app, per user), the replies written but not yet
/// flushed, and the log of limits reached. Every frame the daemon writes goes through
/// `send`, so the cap on unread replies is enforced in one place. It builds each new
/// connection's pipeline, whose handler reports to `events`. Confined to the loop.
final class ConnectionTable {
    private let limits: ConnectionLimits
    private let maximumFrameLength: Int
    /// Where each connection's handler reports (the `ConnectionService`), set once when the
    /// daemon's rooms are wired; weak, since that service holds this table.
    weak var events: (any ConnectionEvents)?
    private let logger: Logger
    private let loop: EventLoop
    /// A flush is queued for the end of this loop tick (`flushAtEndOfTick`).
    private var flushQueued = false
    private var all: [ObjectIdentifier: ClientConnection] = [:]
    private var apps: [String: ClientConnection] = [:]
    private var unflushed: [ObjectIdentifier: Channel] = [:]
    private var limitLog = LimitLog()
    /// Who holds the connections on the socket (not apps' launch connections).
    private(set) var shares: ConnectionShares

    init(limits: ConnectionLimits, maximumFrameLength: Int, logger: Logger, loop: EventLoop) {
        self.limits = limits
        self.maximumFrameLength = maximumFrameLength
        shares = ConnectionShares(limits: limits)
        self.logger = logger
        self.loop = loop
    }

    var connections: Dictionary<ObjectIdentifier, ClientConnection>.Values { all.values }

    /// The handler (frames, envelopes, the connection's life) on a new connection. `peer` stands in for SO_PEERCRED on
    /// channels that have no socket (the testing kit's).
    func installPipeline(on channel: Channel, kind: ClientConnection.Kind, peer: PeerCredentials? = nil) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            guard let events else { throw ChannelError.ioOnClosedChannel }
            try channel.pipeline.syncOperations.addHandler(ConnectionHandler(events: events, kind: kind, peer: peer, maximumFrameLength: maximumFrameLength))
        }
    }

    /// Closes a connection that is ending (its peer finished sending, or it was refused) once
    /// nothing is owed to it: no open waits for an answer and no pasteboard request.
    func closeIfDone(_ connection: ClientConnection) {
        guard connection.finishedSending || connection.closing, connection.waiting.isEmpty, !connection.awaitsPasteboard else { return }
        flush()
        connection.channel.close(promise: nil)
    }

    func contains(_ connection: ClientConnection) -> Bool { all[ObjectIdentifier(connection.channel)] != nil }

    /// The connection whose channel is `channel` (an in-process peer finds its own).
    func connection(on channel: Channel) -> ClientConnection? { all[ObjectIdentifier(channel)] }

    func add(_ connection: ClientConnection) {
        all[ObjectIdentifier(connection.channel)] = connection
        if let holder = connection.holder { shares.add(holder) }
        if let app = connection.appID { apps[app] = connection }
    }

    /// Forgets a closed connection; false if it was already forgotten.
    func remove(_ connection: ClientConnection) -> Bool {
        guard all.removeValue(forKey: ObjectIdentifier(connection.channel)) != nil else { return false }
        if let holder = connection.holder { shares.remove(holder) }
        unflushed[ObjectIdentifier(connection.channel)] = nil
        return true
    }

    /// The connection that drives `app`, if it has one.
    func app(_ app: String) -> ClientConnection? { apps[app] }

    /// A socket peer became `app` (a hand-started app's check-in).
    func attach(_ connection: ClientConnection, as app: String) { apps[app] = connection }

    /// Forgets `app`'s connection if it is `connection` (or any, when nil); true if it was.
    @discardableResult
    func detach(_ app: String, ifItIs connection: ClientConnection? = nil) -> ClientConnection? {
        guard let current = apps[app], connection == nil || current === connection else { return nil }
        apps[app] = nil
        return current
    }

    /// Logs a limit being reached (once, then at most once a minute with a count).
    func limitReached(_ limit: PeerLimit, _ detail: String) {
        limitLog.reached(limit, detail, logger: logger)
    }

    /// Queues a frame; `flush` writes every touched channel once per event.
    ///
    /// A peer that does not read its replies is paced (the handler stops reading its
    /// requests above `ConnectionLimits.stopReadingAboveBytes`) and, once more than
    /// `maximumQueuedOutputBytes` wait for it, disconnected: its replies are dropped.
    func send(_ envelope: Envelope, to connection: ClientConnection) {
        if let receive = connection.receive {
            // In process: nothing queues, so there is nothing to pace or to flush.
            return receive(envelope)
        }
        let channel = connection.channel
        guard !connection.overflowed else { return }
        let cap = limits.maximumQueuedOutputBytes
        // A writable channel holds at most its high water mark (1 MiB on the socket, NIO's
        // 64 KiB on an app's), below any cap the configuration file allows (2 MiB or more):
        // then only an unwritable one is asked how much it holds, which costs an option
        // lookup by type on every frame.
        if cap < ConnectionLimits.stopReadingAboveBytes || !channel.isWritable, let queued = try? channel.syncOptions?.getOption(.bufferedWritableBytes), queued > cap {
            connection.overflowed = true
            connection.closing = true
            limitReached(.queuedOutput, "\(connection.identity) (pid \(connection.peerPID.map { "\($0)" } ?? "-")) left \(queued) bytes of replies unread; disconnected")
            logger.warning("disconnecting \(connection.identity): more than \(cap) bytes of replies queued and unread (connections.maximumQueuedOutputBytes)", metadata: ["peer": "\(connection.identity)"])
            channel.close(promise: nil)
            return
        }
        channel.write(channel.allocator.buffer(bytes: Frame.encode(envelope)), promise: nil)
        unflushed[ObjectIdentifier(channel)] = channel
    }

    /// Frames already encoded, to the app's connection (what of a prelude the socket did not
    /// take at spawn); dropped when the app has none. Only for a socket's channel: the
    /// testing kit's in-process apps take envelopes, and never get bytes.
    func send(bytes: [UInt8], toApp app: String) {
        guard let connection = apps[app], connection.receive == nil else { return }
        let channel = connection.channel
        channel.write(channel.allocator.buffer(bytes: bytes), promise: nil)
        unflushed[ObjectIdentifier(channel)] = channel
    }

    /// Sends to the app's connection; dropped when the app has none (it is gone).
    func send(_ envelope: Envelope, toApp app: String) {
        guard let connection = apps[app] else { return }
        send(envelope, to: connection)
    }

    /// Writes out every touched channel now (before a close, or outside a read).
    func flush() {
        guard !unflushed.isEmpty else { return }
        for channel in unflushed.values { channel.flush() }
        unflushed.removeAll(keepingCapacity: true)
    }

    /// Writes out every touched channel once the loop has handled all the reads of this
    /// tick. Flushing at the end of each channel's reads instead cost one write to an app
    /// per caller whose open reached it in the same tick (ten callers, ten `write`s and as
    /// many wake-ups of the app); now the app gets them in one. A task the loop queues for
    /// itself runs after the tick's I/O and needs no wake-up.
    func flushAtEndOfTick() {
        guard !unflushed.isEmpty, !flushQueued else { return }
        flushQueued = true
        loop.assumeIsolated().execute { [self] in
            flushQueued = false
            flush()
        }
    }

    /// Sends a last `failure` (id 0) and ends the connection so that the peer reads it: the
    /// daemon stops writing, then discards what the peer still sends until it closes (at most
    /// `linger`). Closing at once would throw away unread bytes and make the kernel reset the
    /// connection, and the peer would see ECONNRESET instead of the reason.
    static func refuse(_ channel: Channel, with error: OpenError, linger: TimeAmount = .seconds(2)) {
        let frame = Frame.encode(Envelope(id: 0, .failure(error)))
        channel.writeAndFlush(channel.allocator.buffer(bytes: frame)).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
            channel.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
        }
    }
}
