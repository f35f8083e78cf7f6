import CLaunchServicesShim
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The connections room: a connection's life (who the peer is and may be, the limits it
/// meets on arrival, a refusal it can read, what is dropped when it goes) and every request
/// it sends, routed to the room that answers it (ConnectionService+Requests.swift). It is
/// what each connection's handler reports to (`ConnectionEvents`). Confined to the loop.
final class ConnectionService: ConnectionEvents {
    let configuration: DaemonConfiguration
    let loop: EventLoop
    let logger: Logger
    let connections: ConnectionTable
    let supervisor: ProcessSupervisor
    let lifecycle: AppLifecycle
    let records: OpenRecords
    let opening: OpenService
    let callbacks: CallbackService
    let checkIn: CheckInService
    let pasteboards: PasteboardService
    let admin: AdminService
    /// Who a socket peer is, when a test says so instead of `identify` (to count the walks).
    var peerOrigin: ((Int32) -> ProcessAncestry.Origin)?

    init(configuration: DaemonConfiguration, loop: EventLoop, logger: Logger, connections: ConnectionTable, supervisor: ProcessSupervisor,
         lifecycle: AppLifecycle, records: OpenRecords, opening: OpenService, callbacks: CallbackService, checkIn: CheckInService,
         pasteboards: PasteboardService, admin: AdminService) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.connections = connections
        self.supervisor = supervisor
        self.lifecycle = lifecycle
        self.records = records
        self.opening = opening
        self.callbacks = callbacks
        self.checkIn = checkIn
        self.pasteboards = pasteboards
        self.admin = admin
    }

    func connectionOpened(channel: Channel, kind: ClientConnection.Kind, peer: PeerCredentials?) -> ClientConnection? {
        loop.assertInEventLoop()
        let connection: ClientConnection
        switch kind {
        case .socket:
            guard let peer else {
                logger.warning("refused a connection whose peer credentials could not be read")
                channel.close(promise: nil)
                return nil
            }
            guard peer.uid == getuid() else {
                logger.warning("refused a connection from uid \(peer.uid) (pid \(peer.pid)): only uid \(getuid()) may use this daemon")
                ConnectionTable.refuse(channel, with: OpenError(.notPermitted, "launchservicesd of uid \(getuid()) refuses peers of uid \(peer.uid)"))
                return nil
            }
            let limits = configuration.connectionLimits
            func refuse(_ refusal: ConnectionShares.Refusal, _ holder: ConnectionShares.Holder) {
                connections.limitReached(refusal.limit, refusal.detail(for: holder, uid: peer.uid))
                ConnectionTable.refuse(channel, with: OpenError(.unavailable, refusal.message(for: holder, uid: peer.uid, limits: limits)), linger: .milliseconds(250))
            }
            // The user's limit and the process's share need only the pid: met before the
            // peer's ancestry is read, so a flood at them pays no walk of /proc.
            if let refusal = connections.shares.refusal(forProcess: peer.pid) {
                refuse(refusal, ConnectionShares.Holder(pid: peer.pid, app: nil))
                return nil
            }
            // Known before the app's share is counted, since an app and its descendants
            // share one.
            let origin = peerOrigin?(peer.pid) ?? identify(peer.pid)
            let identity: String
            switch origin {
            case .app(let app): identity = app
            case .orphanOfApp: identity = LaunchServicesDaemon.orphanIdentity
            case .user: identity = LaunchServicesDaemon.shellIdentity
            case .unknown:
                connections.limitReached(.fileDescriptors, "cannot read the ancestry of pid \(peer.pid) (out of descriptors); refused it")
                ConnectionTable.refuse(channel, with: AcceptPacing.refusal, linger: .milliseconds(250))
                return nil
            case .gone:
                logger.notice("refused a connection whose process (pid \(peer.pid)) has ended: whoever holds it now cannot be identified")
                ConnectionTable.refuse(channel, with: OpenError(.notPermitted, "the process that made this connection (pid \(peer.pid)) has ended; its holder cannot be identified, so it is refused"), linger: .milliseconds(250))
                return nil
            }
            let holder = ConnectionShares.Holder(pid: peer.pid, app: origin == .user ? nil : identity)
            if let refusal = connections.shares.refusal(for: holder) {
                refuse(refusal, holder)
                return nil
            }
            connection = ClientConnection(channel: channel, kind: .socket, identity: identity)
            connection.peerPID = peer.pid
            connection.holder = holder
            connection.descendsFromApp = origin != .user
            connection.helloDeadline = loop.assumeIsolated().scheduleTask(in: TimeAmount(limits.firstMessageTimeout)) { [self] in
                guard !connection.greeted, !connection.closing else { return }
                connections.limitReached(.firstMessage, "pid \(peer.pid) said nothing for \(limits.firstMessageTimeout)")
                connection.closing = true
                ConnectionTable.refuse(channel, with: OpenError(.protocolError, "no hello within \(limits.firstMessageTimeout) of connecting (connections.firstMessageSeconds); say hello first"), linger: .milliseconds(250))
            }
        case .app(let id):
            connection = ClientConnection(channel: channel, kind: kind, identity: id)
        }
        connections.add(connection)
        return connection
    }

    /// Who a socket peer is: a process an app started speaks as that app (its pid, or its
    /// nearest app ancestor); one an app let go (adopted by the daemon) as an unknown app.
    /// The ancestry is read only once the daemon has started an app. Reading it opens /proc
    /// files: at the descriptor limit it is read again with the descriptor reserve released.
    func identify(_ pid: Int32) -> ProcessAncestry.Origin {
        if let app = supervisor.app(pid: pid) { return .app(app) }
        guard supervisor.hasSpawned else { return .user }
        return DescriptorReserve.shared.retryingAtLimit {
            ProcessAncestry.origin(of: pid, daemon: getpid()) { supervisor.app(pid: $0) }
        } outOfDescriptors: { $0 == .unknown }
    }

    /// The table forgets the connection at once; what the machine and the ledger hold for
    /// it goes through the executor (`forgetClosed`), after the action list being carried
    /// out if an action closed it.
    func connectionClosed(_ connection: ClientConnection) {
        loop.assertInEventLoop()
        guard connections.remove(connection) else { return }
        connection.helloDeadline?.cancel()
        callbacks.release(connection)
        // NIO reports a close at once, also one an action made (a caller disconnected for
        // its unread replies): what the rooms hold for it is dropped after that list.
        lifecycle.afterCurrentActions { [unowned self] in forgetClosed(connection) }
    }

    /// A closed connection's opens and app, handed to the machine between action lists.
    private func forgetClosed(_ connection: ClientConnection) {
        // Opens still queued for this caller are dropped: nobody would read their answers.
        // Those an app already has end in their own time; `lsctl history` records both.
        let waiting = connection.waiting
        lifecycle.event { machine, _ in machine.withdraw(waiting) }
        records.callerLeft(waiting, owed: lifecycle.machine.owed(among: waiting).union(opening.launchesOwed(among: waiting)))
        // Likewise its waiting pasteboard requests; one under way ends unanswered.
        pasteboards.connectionClosed(connection)
        // An app whose exit is being handled (`AppLifecycle.processExited`) closed its end by
        // dying: nothing to terminate, the exit says what happened.
        if let app = connection.appID, connections.detach(app, ifItIs: connection) != nil, !lifecycle.exitsDraining.contains(app) {
            lifecycle.event { machine, _ in machine.disconnected(app: app) }
        }
        connections.flush()
    }

    /// An I/O error (the peer reset the connection) only ends it.
    func connectionEnded(_ connection: ClientConnection, error: Error) {
        logger.debug("connection ended: \(error)", metadata: ["peer": "\(connection.identity)"])
        connection.channel.close(promise: nil)
    }

    func protocolViolation(_ text: String, on connection: ClientConnection) {
        loop.assertInEventLoop()
        guard !connection.closing else { return }
        // The text may quote what the peer sent (an unknown enum string): logged and
        // answered with its control characters escaped.
        let text = TerminalText.escapingControls(text)
        connection.closing = true
        logger.warning("protocol violation; closing the connection: \(text)", metadata: ["peer": "\(connection.identity)"])
        ConnectionTable.refuse(connection.channel, with: OpenError(.protocolError, text))
    }

    /// The peer shut down its sending side (a script's `shutdown(SHUT_WR)`, or a tool that
    /// exited). Opens it still waits for are answered; then the connection ends.
    func peerFinishedSending(_ connection: ClientConnection) {
        loop.assertInEventLoop()
        connection.finishedSending = true
        // A callback address is for a caller that is still listening; this one may be gone.
        callbacks.release(connection)
        connections.closeIfDone(connection)
    }

    /// The end of a batch of reads: what it produced is written at the end of the tick.
    func readBatchEnded() {
        connections.flushAtEndOfTick()
    }
}
