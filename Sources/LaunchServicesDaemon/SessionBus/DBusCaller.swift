#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore
import NIOPosix

/// One D-Bus sender (a unique connection name) as a peer of the daemon: a socketpair whose
/// daemon end is served like any socket connection, with the sender's credentials from the
/// bus (`GetConnectionCredentials`) standing in for `SO_PEERCRED`, so the socket's rules
/// decide who it is and what it may hold (`ConnectionService.connectionOpened`: another uid
/// refused, an app or its child speaking as that app, the connection shares). Once accepted,
/// no bytes cross the pair: the caller hands its requests to the connections room as values
/// (`ConnectionEvents.received`, as if read from the socket) and the daemon's answers come
/// back as values (`ClientConnection.receive`), which saves a frame written and read each
/// way per call. The pair still carries a refusal (read by `DBusPeerHandler`) and ends the
/// connection when either side closes. The requests are the protocol's, like `lsopen`'s
/// and `lsctl`'s: `org.freedesktop.Application`'s `Open` is one `open` per URL, answered
/// when each of its URLs is; each method of the project's interface is one request (`open`,
/// `canOpen`, `query`, `command`), its answer carried back as D-Bus values. Confined to the loop.
final class DBusCaller {
    /// An `org.freedesktop.Application.Open` waiting for its URLs' answers.
    private struct Call {
        var remaining: Int
        /// The first failure by the URL's position in the call.
        var failure: (index: Int, error: OpenError)?
    }

    /// What one request of the peer answers.
    private enum Pending {
        /// One URL of an `org.freedesktop.Application.Open`.
        case uri(call: UInt64, index: Int)
        /// The project's `Open`; `fellBackFrom` when this is the fallback's open.
        case open(call: UInt64, url: String, options: BusOpenOptions, fellBackFrom: String?)
        case canOpen(call: UInt64)
        /// A query or command answered with a JSON report.
        case report(call: UInt64, shape: BusReplyValue.Shape)

        var call: UInt64 {
            switch self {
            case .uri(let call, _), .open(let call, _, _, _), .canOpen(let call), .report(let call, _): return call
            }
        }
    }

    private enum Stage {
        /// Asking the bus who the sender is, or waiting for the daemon to accept the
        /// connection; the calls' requests wait (in order).
        case identifying([Envelope])
        /// Accepted: `connection` is the daemon's side of the pair.
        case ready(ClientConnection)
        case ended
    }

    let sender: String
    private unowned let service: SessionBusService
    private var stage = Stage.identifying([])
    /// The caller's end of the pair, once made: closed when the caller ends.
    private var peer: Channel?
    private var calls: [UInt64: Call] = [:]
    /// Calls of the project's interface, each waiting for its one request.
    private var singles: Set<UInt64> = []
    private var requests: [UInt32: Pending] = [:]
    private var nextRequest: UInt32 = 0
    /// The identity the daemon gave this peer (its `welcome`), for the log.
    private(set) var identity: String?
    /// Who the bus says the sender is, for the log: which process asked is what tells a
    /// D-Bus open from one `lsopen` made (both speak as the user's process).
    private var credentials: PeerCredentials?

    init(sender: String, service: SessionBusService) {
        self.sender = sender
        self.service = service
    }

    /// D-Bus calls not yet answered.
    var callsWaiting: Int { calls.count + singles.count }

    /// Asks the bus who the sender is, then connects.
    func start() {
        let call = DBusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                  member: "GetConnectionCredentials", arguments: [.string(sender)])
        service.bus.call(call, deadline: service.settings.credentialsDeadline, on: service.loop) { [self] result in
            guard case .identifying = stage else { return }
            switch result {
            case .failure(let failure):
                end(OpenError(.unavailable, "launchservicesd cannot ask the session bus who \(sender) is: \(failure)"))
            case .success(let reply):
                guard let pid = reply.unsignedEntries["ProcessID"], let uid = reply.unsignedEntries["UnixUserID"], let pid32 = Int32(exactly: pid) else {
                    return end(OpenError(.notPermitted, "the session bus did not say which process and user \(sender) is (GetConnectionCredentials has no ProcessID or UnixUserID); launchservicesd answers only callers it can identify"))
                }
                connect(as: PeerCredentials(pid: pid32, uid: uid))
            }
        }
    }

    /// `Open(uris)`: one open per URL, answered together.
    func open(_ uris: [String], call id: UInt64) {
        guard case .ended = stage else {
            var envelopes: [Envelope] = []
            for uri in uris {
                let message = Message.open(url: uri, annotation: nil)
                if let error = oversized(message, url: uri, annotated: false) { return service.answer(id, error: error) }
                envelopes.append(Envelope(id: 0, message))
            }
            calls[id] = Call(remaining: uris.count)
            for index in envelopes.indices { envelopes[index].id = register(.uri(call: id, index: index)) }
            send(envelopes)
            return
        }
        service.answer(id, error: OpenError(.unavailable, "the connection for \(sender) has ended; call again"))
    }

    /// A method of the project's interface: one request, answered by `answered(_:_:)`.
    private func request(_ message: Message, _ pending: Pending, call id: UInt64, url: String? = nil, annotated: Bool = false) {
        if let url, let error = oversized(message, url: url, annotated: annotated) { return service.answer(id, error: error) }
        guard case .ended = stage else {
            singles.insert(id)
            send([Envelope(id: register(pending), message)])
            return
        }
        service.answer(id, error: OpenError(.unavailable, "the connection for \(sender) has ended; call again"))
    }

    /// `Open(s url, a{sv} options)`.
    func open(_ url: String, options: BusOpenOptions, call id: UInt64) {
        if let fallback = options.fallback,
           let error = oversized(.open(url: fallback, annotation: options.annotation, options: options.options), url: fallback, annotated: options.annotation != nil) {
            return service.answer(id, error: error)
        }
        request(.open(url: url, annotation: options.annotation, options: options.options), .open(call: id, url: url, options: options, fellBackFrom: nil), call: id,
                url: url, annotated: options.annotation != nil)
    }

    func canOpen(_ url: String, call id: UInt64) {
        request(.canOpen(url: url), .canOpen(call: id), call: id, url: url)
    }

    /// `Explain(s url)`.
    func explain(_ url: String, call id: UInt64) {
        request(AdminCommand.explain(url: url).message, .report(call: id, shape: .dictionary), call: id, url: url)
    }

    /// A query or command whose JSON report is the answer, in `shape`.
    func report(_ message: Message, shape: BusReplyValue.Shape, call id: UInt64) {
        request(message, .report(call: id, shape: shape), call: id)
    }

    private func register(_ pending: Pending) -> UInt32 {
        nextRequest = nextRequest == UInt32.max ? 1 : nextRequest + 1
        requests[nextRequest] = pending
        return nextRequest
    }

    private func send(_ envelopes: [Envelope]) {
        switch stage {
        case .identifying(let queued):
            stage = .identifying(queued + envelopes)
        case .ready(let connection):
            guard let events = service.connections.events else {
                return end(OpenError(.unavailable, "launchservicesd is stopping; it cannot answer \(sender)"))
            }
            for envelope in envelopes { events.received(envelope, from: connection) }
            // What the requests sent on (an open to its app) goes out at the end of the tick,
            // as after a batch of reads from a socket.
            events.readBatchEnded()
        case .ended:
            break
        }
    }

    /// A request too large to be a frame is refused by name, as a socket peer's would be by
    /// the frame decoder (which would end its connection); only requests that could be that
    /// large are measured.
    private func oversized(_ message: Message, url: String, annotated: Bool) -> OpenError? {
        let limit = service.maximumFrameLength
        guard annotated || url.utf8.count > limit / 2 else { return nil }
        let length = Frame.encode(Envelope(id: 1, message)).count - Frame.headerLength
        guard length > limit else { return nil }
        return OpenError(.invalidRequest, "the request would be a frame of \(length) bytes; launchservicesd takes frames of at most \(limit) bytes (maximumFrameLength)")
    }

    private func connect(as peer: PeerCredentials) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            return end(OpenError(.unavailable, "launchservicesd cannot make a connection for \(sender): socketpair: \(String(cString: strerror(errno)))"))
        }
        credentials = peer
        let loop = service.loop
        let connections = NIOLoopBound(service.connections, eventLoop: loop)
        let me = NIOLoopBound(self, eventLoop: loop)
        let maximumFrameLength = service.maximumFrameLength
        let daemonSide = ClientBootstrap(group: loop)
            .channelInitializer { channel in connections.value.installPipeline(on: channel, kind: .socket, peer: peer) }
            .withConnectedSocket(fds[0])
        daemonSide.assumeIsolated().whenFailure { _ in close(fds[0]) }
        let peerSide = ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: maximumFrameLength)))
                    try channel.pipeline.syncOperations.addHandler(DBusPeerHandler(caller: me.value))
                }
            }
            .withConnectedSocket(fds[1])
        peerSide.assumeIsolated().whenFailure { _ in close(fds[1]) }
        peerSide.and(daemonSide).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .failure(let error):
                // Whichever side was made goes with the other.
                for side in [peerSide, daemonSide] { side.assumeIsolated().whenSuccess { $0.close(promise: nil) } }
                end(OpenError(.unavailable, "launchservicesd cannot serve \(sender): \(error)"))
            case .success(let (peerChannel, daemonChannel)):
                guard case .identifying(let queued) = stage else { return peerChannel.close(promise: nil) }
                self.peer = peerChannel
                // Refused (another uid, a share used up): the refusal is on its way to the
                // caller's end, which ends this caller when it reads it.
                guard let connection = service.connections.connection(on: daemonChannel) else { return }
                connection.receive = { [weak self] envelope in self?.received(envelope) }
                connection.via = "dbus \(sender) pid \(credentials?.pid ?? 0)"
                stage = .ready(connection)
                send([Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "dbus:" + sender))] + queued)
            }
        }
    }

    /// What the daemon's end sent.
    func received(_ envelope: Envelope) {
        switch envelope.message {
        case .welcome(_, let identity):
            self.identity = identity
            let who = credentials.map { " (pid \($0.pid), uid \($0.uid))" } ?? ""
            service.logger.debug("D-Bus caller \(sender)\(who) speaks as \(identity)")
        case .failure(let error) where envelope.id == 0:
            // The connection is refused or ended (another uid, a limit, the stop).
            end(error)
        default:
            guard envelope.id != 0, let pending = requests.removeValue(forKey: envelope.id) else { return }
            answered(pending, envelope.message)
        }
    }

    private func answered(_ pending: Pending, _ message: Message) {
        if case .uri(let id, let index) = pending {
            switch message {
            case .openResult(let outcome): return answered(call: id, index: index, outcome.error)
            case .failure(let error): return answered(call: id, index: index, error)
            default: return answered(call: id, index: index, unexpected(message))
            }
        }
        let id = pending.call
        guard singles.contains(id) else { return }
        let result: Result<BusReplyValue, OpenError>
        switch (pending, message) {
        case (_, .failure(let error)):
            result = .failure(error)
        case (.open(_, let url, let options, let fellBackFrom), .openResult(let outcome)):
            if let error = outcome.error {
                // lsopen's --fallback: only when no app handles the URL and none was named.
                if error.code == .noHandler, fellBackFrom == nil, options.options.app == nil, let fallback = options.fallback {
                    service.logger.debug("D-Bus caller \(sender): no app handles \(TerminalText.quoted(url)); opening the fallback \(TerminalText.quoted(fallback))")
                    // Not from inside this answer: it may be handed over in the middle of the
                    // daemon's own work on another request, which the new open would enter.
                    let request = Envelope(id: register(.open(call: id, url: fallback, options: options, fellBackFrom: url)),
                                           .open(url: fallback, annotation: options.annotation, options: options.options))
                    service.loop.assumeIsolated().execute { [self] in send([request]) }
                    return
                }
                result = .failure(error)
            } else {
                result = .success(.dictionary(OutcomeJSON.entries(outcome, url: url, fellBackFrom: fellBackFrom)))
            }
        case (.canOpen, .canOpenResult(let canOpen, _)):
            result = .success(.boolean(canOpen))
        case (.report(_, let shape), .queryResult(let json)):
            result = Result { () throws(OpenError) in try BusReplyValue(json: json, shape: shape, maximumBytes: service.maximumFrameLength) }
        default:
            result = .failure(unexpected(message))
        }
        singles.remove(id)
        service.answer(id, result)
    }

    /// An answer of a kind the request never gets: the daemon's own bug, said by name.
    private func unexpected(_ message: Message) -> OpenError {
        OpenError(.protocolError, "launchservicesd answered with \(message.kindName), which does not answer this request")
    }

    private func answered(call id: UInt64, index: Int, _ error: OpenError?) {
        guard var call = calls[id] else { return }
        call.remaining -= 1
        if let error, call.failure.map({ index < $0.index }) ?? true { call.failure = (index, error) }
        guard call.remaining <= 0 else {
            calls[id] = call
            return
        }
        calls[id] = nil
        service.answer(id, error: call.failure?.error)
    }

    /// The peer's connection closed: whatever is still owed is answered `unavailable`.
    func closed() {
        end(OpenError(.unavailable, "launchservicesd closed the connection for \(sender) before answering"))
    }

    /// The sender left the bus, or the bus went away: the connection closes, so the daemon
    /// withdraws its opens as for any caller that left. Each call still owed is answered all
    /// the same: the bus thread holds every call until it is answered (and counts it against
    /// its bound), and the bus drops a reply to a sender that is gone.
    func leave() {
        end(OpenError(.unavailable, "\(sender) left the session bus before its answer"))
    }

    /// Answers every call still owed one with `error` and ends the peer.
    private func end(_ error: OpenError) {
        let owed = (Array(calls.keys) + Array(singles)).sorted()
        calls.removeAll()
        singles.removeAll()
        requests.removeAll()
        peer?.close(promise: nil)
        peer = nil
        stage = .ended
        service.forget(self)
        for id in owed { service.answer(id, error: error) }
    }
}

/// The D-Bus caller's end of its socketpair: frames in, envelopes to the caller.
final class DBusPeerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let caller: DBusCaller

    init(caller: DBusCaller) { self.caller = caller }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        let decoded = body.withUnsafeReadableBytes { raw -> Envelope? in try? Envelope.decode(raw) }
        if let decoded { caller.received(decoded) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        caller.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
