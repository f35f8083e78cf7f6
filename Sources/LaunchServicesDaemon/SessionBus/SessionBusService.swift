import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// How the daemon serves the session bus.
package struct SessionBusServiceSettings: Sendable, Equatable {
    /// D-Bus calls one sender may have waiting; one past it is answered
    /// `….Error.Unavailable` at once.
    package var maximumCallsPerSender = 64
    /// URLs in one `Open`, at most (each is an open of its own).
    package var maximumURIsPerCall = 256
    /// How long the bus may take to say who a sender is.
    package var credentialsDeadline: Duration = .seconds(5)

    package init() {}
}

/// The session bus room: the daemon's name and `org.freedesktop.Application` on the user's
/// session bus. The bus thread (`SessionBusClient`) owns the connection and hands each
/// incoming call here; each sender is a peer of the daemon (`DBusCaller`) so its opens take
/// the socket's path, rules and limits; each call is answered once, through the thread.
/// Confined to the loop.
final class SessionBusService {
    let loop: EventLoop
    let logger: Logger
    let bus: SessionBusClient
    let connections: ConnectionTable
    let maximumFrameLength: Int
    let settings: SessionBusServiceSettings
    private var callers: [String: DBusCaller] = [:]
    /// The bus could not be reached, and that was logged: the retries are logged at debug.
    private var unreachableLogged = false

    init(loop: EventLoop, logger: Logger, bus: SessionBusClient, connections: ConnectionTable, maximumFrameLength: Int,
         settings: SessionBusServiceSettings = SessionBusServiceSettings()) {
        self.loop = loop
        self.logger = logger
        self.bus = bus
        self.connections = connections
        self.maximumFrameLength = maximumFrameLength
        self.settings = settings
    }

    /// Signals dropped since the last one sent (the thread held its bound), for the log.
    private var droppedSignals = 0

    /// `AppStateChanged`: an app's state (as `lsctl running` shows it) and pid, never a URL.
    func appStateChanged(_ app: String, state: String, pid: Int32?) {
        if bus.signal(AppStateSignal(app: app, state: state, pid: pid.map { UInt32(bitPattern: $0) } ?? 0)) {
            if droppedSignals > 0 {
                logger.warning("\(droppedSignals) AppStateChanged signals were dropped: the session bus thread held \(SessionBusInbox.maximumSignals) unsent")
                droppedSignals = 0
            }
        } else {
            droppedSignals += 1
        }
    }

    /// Owns the name: the thread connects now and whenever the connection is lost. Call on the loop.
    func start() {
        let me = NIOLoopBound(self, eventLoop: loop)
        let loop = loop
        bus.serve(SessionBusServer(name: LaunchServicesBus.name, path: LaunchServicesBus.objectPath) { event in
            loop.execute { me.value.handle(event) }
        })
    }

    func handle(_ event: SessionBusEvent) {
        switch event {
        case .nameOwned(let address):
            unreachableLogged = false
            logger.info("owns \(LaunchServicesBus.name) on the session bus at \(TerminalText.quoted(address))")
        case .nameRefused(let address, let reason):
            logger.warning("cannot own \(LaunchServicesBus.name) on the session bus at \(TerminalText.quoted(address)): \(reason); serving the socket only")
        case .unreachable(let failure, let retry):
            if unreachableLogged {
                logger.debug("session bus still unreachable: \(failure)")
            } else {
                unreachableLogged = true
                let again = retry > .zero ? "; trying again from time to time" : ""
                logger.notice("not on the session bus: \(failure); serving the socket only\(again)")
            }
        case .lost(let failure, _):
            unreachableLogged = true
            logger.warning("the session bus connection ended (\(failure)); serving the socket and connecting again when the bus is back")
            for caller in Array(callers.values) { caller.leave() }
        case .call(let call):
            received(call)
        case .senderLeft(let sender):
            callers[sender]?.leave()
        }
    }

    private func received(_ call: IncomingBusCall) {
        switch call.method {
        case .activate, .open(uris: []):
            // The daemon has no window to show: running is all Activate asks.
            logger.debug("D-Bus caller \(call.sender) activated launchservicesd: it has no window, so running is all it does")
            answer(call.id, error: nil)
        case .activateAction(let name):
            answer(call.id, error: OpenError(.invalidRequest, "launchservicesd has no action \(TerminalText.quoted(name)); it exports none"))
        case .open(let uris):
            guard uris.count <= settings.maximumURIsPerCall else {
                return answer(call.id, error: OpenError(.invalidRequest, "\(uris.count) URLs in one Open; launchservicesd takes at most \(settings.maximumURIsPerCall) per call"))
            }
            caller(for: call)?.open(uris, call: call.id)
        case .openURL(let url, let entries, let total):
            let options: BusOpenOptions
            do {
                options = try BusOpenOptions.parse(entries.map { ($0.key, $0.value) }, total: total)
            } catch {
                return answer(call.id, error: error)
            }
            caller(for: call)?.open(url, options: options, call: call.id)
        case .canOpen(let url):
            caller(for: call)?.canOpen(url, call: call.id)
        case .explain(let url):
            caller(for: call)?.explain(url, call: call.id)
        case .report(let query):
            caller(for: call)?.report(query.message, shape: .dictionaries, call: call.id)
        case .quit(let app):
            caller(for: call)?.report(AdminCommand.quit(id: app).message, shape: .dictionary, call: call.id)
        }
    }

    /// The sender's peer (made on its first call), or `nil` when the sender already has as
    /// many calls waiting as it may: then the call is answered here, by name.
    private func caller(for call: IncomingBusCall) -> DBusCaller? {
        let caller = callers[call.sender] ?? {
            let made = DBusCaller(sender: call.sender, service: self)
            callers[call.sender] = made
            made.start()
            return made
        }()
        guard caller.callsWaiting < settings.maximumCallsPerSender else {
            connections.limitReached(.pendingRequests, "D-Bus caller \(call.sender) has \(settings.maximumCallsPerSender) calls waiting")
            answer(call.id, error: OpenError(.unavailable, "\(call.sender) already has \(settings.maximumCallsPerSender) D-Bus calls waiting for an answer, the limit; wait for their answers"))
            return nil
        }
        return caller
    }

    /// Answers an incoming call: empty, or the product's error by name with its message.
    func answer(_ id: UInt64, error: OpenError?) {
        answer(id, error.map { .failure($0) } ?? .success(.none))
    }

    /// Answers an incoming call with its value, or the product's error by name with its message.
    func answer(_ id: UInt64, _ result: Result<BusReplyValue, OpenError>) {
        switch result {
        case .success(let value):
            bus.reply(IncomingBusReply(id: id, value: value))
        case .failure(let error):
            bus.reply(IncomingBusReply(id: id, error: (LaunchServicesBus.errorName(error.code), error.message)))
        }
    }

    func forget(_ caller: DBusCaller) {
        if callers[caller.sender] === caller { callers[caller.sender] = nil }
    }

    /// The stop: the peers close with the other connections; the thread answers what it holds.
    func stop() {
        for caller in Array(callers.values) { caller.leave() }
    }
}
