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
/// refused, an app or its child speaking as that app, the connection shares). Its own end, on
/// the loop, speaks the protocol like `lsopen`: one `open` per URL; a D-Bus call is answered
/// when each of its URLs is. Confined to the loop.
final class DBusCaller {
    /// A D-Bus call waiting for its URLs' answers.
    private struct Call {
        var remaining: Int
        /// The first failure by the URL's position in the call.
        var failure: (index: Int, error: OpenError)?
    }

    private enum Stage {
        /// Asking the bus who the sender is; the calls' requests wait (in order).
        case identifying([Envelope])
        case ready(Channel)
        case ended
    }

    let sender: String
    private unowned let service: SessionBusService
    private var stage = Stage.identifying([])
    private var calls: [UInt64: Call] = [:]
    private var requests: [UInt32: (call: UInt64, index: Int)] = [:]
    private var nextRequest: UInt32 = 0
    /// The identity the daemon gave this peer (its `welcome`), for the log.
    private(set) var identity: String?

    init(sender: String, service: SessionBusService) {
        self.sender = sender
        self.service = service
    }

    /// D-Bus calls not yet answered.
    var callsWaiting: Int { calls.count }

    /// Asks the bus who the sender is, then connects.
    func start() {
        let call = DBusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                  member: "GetConnectionCredentials", arguments: [.string(sender)])
        service.bus.call(call, deadline: service.settings.credentialsDeadline, on: service.loop) { [self] result in
            guard case .identifying(let queued) = stage else { return }
            switch result {
            case .failure(let failure):
                end(OpenError(.unavailable, "launchservicesd cannot ask the session bus who \(sender) is: \(failure)"))
            case .success(let reply):
                guard let pid = reply.unsignedEntries["ProcessID"], let uid = reply.unsignedEntries["UnixUserID"], let pid32 = Int32(exactly: pid) else {
                    return end(OpenError(.notPermitted, "the session bus did not say which process and user \(sender) is (GetConnectionCredentials has no ProcessID or UnixUserID); launchservicesd answers only callers it can identify"))
                }
                connect(as: PeerCredentials(pid: pid32, uid: uid), sending: queued)
            }
        }
    }

    /// `Open(uris)`: one open per URL, answered together.
    func open(_ uris: [String], call id: UInt64) {
        guard case .ended = stage else {
            calls[id] = Call(remaining: uris.count)
            var envelopes: [Envelope] = []
            for (index, uri) in uris.enumerated() {
                nextRequest = nextRequest == UInt32.max ? 1 : nextRequest + 1
                requests[nextRequest] = (id, index)
                envelopes.append(Envelope(id: nextRequest, .open(url: uri, annotation: nil)))
            }
            send(envelopes)
            return
        }
        service.answer(id, error: OpenError(.unavailable, "the connection for \(sender) has ended; call again"))
    }

    private func send(_ envelopes: [Envelope]) {
        switch stage {
        case .identifying(let queued):
            stage = .identifying(queued + envelopes)
        case .ready(let channel):
            for envelope in envelopes { channel.write(channel.allocator.buffer(bytes: Frame.encode(envelope)), promise: nil) }
            channel.flush()
        case .ended:
            break
        }
    }

    private func connect(as peer: PeerCredentials, sending queued: [Envelope]) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            return end(OpenError(.unavailable, "launchservicesd cannot make a connection for \(sender): socketpair: \(String(cString: strerror(errno)))"))
        }
        let loop = service.loop
        let connections = NIOLoopBound(service.connections, eventLoop: loop)
        let me = NIOLoopBound(self, eventLoop: loop)
        let maximumFrameLength = service.maximumFrameLength
        _ = ClientBootstrap(group: loop)
            .channelInitializer { channel in connections.value.installPipeline(on: channel, kind: .socket, peer: peer) }
            .withConnectedSocket(fds[0])
            .assumeIsolated().whenFailure { _ in close(fds[0]) }
        ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: maximumFrameLength)))
                    try channel.pipeline.syncOperations.addHandler(DBusPeerHandler(caller: me.value))
                }
            }
            .withConnectedSocket(fds[1])
            .assumeIsolated().whenComplete { [self] result in
                switch result {
                case .failure(let error):
                    close(fds[1])
                    end(OpenError(.unavailable, "launchservicesd cannot serve \(sender): \(error)"))
                case .success(let channel):
                    guard case .identifying = stage else { return channel.close(promise: nil) }
                    stage = .ready(channel)
                    send([Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "dbus:" + sender))] + queued)
                }
            }
    }

    /// What the daemon's end sent.
    func received(_ envelope: Envelope) {
        switch envelope.message {
        case .welcome(_, let identity):
            self.identity = identity
            service.logger.debug("D-Bus caller \(sender) speaks as \(identity)")
        case .openResult(let outcome):
            answered(envelope.id, outcome.error)
        case .failure(let error) where envelope.id == 0:
            // The connection is refused or ended (another uid, a limit, the stop).
            end(error)
        case .failure(let error):
            answered(envelope.id, error)
        default:
            break
        }
    }

    private func answered(_ request: UInt32, _ error: OpenError?) {
        guard let (id, index) = requests.removeValue(forKey: request), var call = calls[id] else { return }
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

    /// The sender left the bus, or the bus went away: nothing can be answered; the
    /// connection closes, so the daemon withdraws its opens as for any caller that left.
    func leave() {
        calls.removeAll()
        requests.removeAll()
        if case .ready(let channel) = stage { channel.close(promise: nil) }
        stage = .ended
        service.forget(self)
    }

    /// Answers every call still owed one with `error` and ends the peer.
    private func end(_ error: OpenError) {
        let owed = calls.keys.sorted()
        calls.removeAll()
        requests.removeAll()
        if case .ready(let channel) = stage { channel.close(promise: nil) }
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
