import CLaunchServicesShim
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// A connection's life: who the peer is and may be, the limits it meets on arrival, a
/// refusal it can read, and what is dropped when it goes.
extension LaunchServicesDaemon: ConnectionEvents {
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
            // A process an app started speaks as that app (its pid, or its nearest app
            // ancestor); one an app let go (adopted by the daemon) as an unknown app. Known
            // before the limits, since an app and its descendants share one app's share.
            // Reading the ancestry opens /proc files: at the descriptor limit it is read
            // again with the descriptor reserve released.
            func ancestry() -> ProcessAncestry.Origin {
                ProcessAncestry.origin(of: peer.pid, daemon: getpid()) { supervisor.app(pid: $0) }
            }
            var origin: ProcessAncestry.Origin = supervisor.app(pid: peer.pid).map { .app($0) } ?? (supervisor.hasSpawned ? ancestry() : .user)
            if origin == .unknown { origin = DescriptorReserve.shared.withReleased(ancestry) }
            let identity: String
            switch origin {
            case .app(let app): identity = app
            case .orphanOfApp: identity = Self.orphanIdentity
            case .user: identity = Self.shellIdentity
            case .unknown:
                limitReached(.fileDescriptors, "cannot read the ancestry of pid \(peer.pid) (out of descriptors); refused it")
                ConnectionTable.refuse(channel, with: AcceptPacing.refusal, linger: .milliseconds(250))
                return nil
            }
            let holder = ConnectionShares.Holder(pid: peer.pid, app: origin == .user ? nil : identity)
            if let refusal = connections.shares.refusal(for: holder) {
                limitReached(refusal.limit, refusal.detail(for: holder, uid: peer.uid))
                ConnectionTable.refuse(channel, with: OpenError(.unavailable, refusal.message(for: holder, uid: peer.uid, limits: limits)), linger: .milliseconds(250))
                return nil
            }
            connection = ClientConnection(channel: channel, kind: .socket, identity: identity)
            connection.peerPID = peer.pid
            connection.holder = holder
            connection.descendsFromApp = origin != .user
            connection.helloDeadline = loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(limits.firstMessageTimeout.nanoseconds))) { [self] in
                guard !connection.greeted, !connection.closing else { return }
                limitReached(.firstMessage, "pid \(peer.pid) said nothing for \(limits.firstMessageTimeout)")
                connection.closing = true
                ConnectionTable.refuse(channel, with: OpenError(.protocolError, "no hello within \(limits.firstMessageTimeout) of connecting (connections.firstMessageSeconds); say hello first"), linger: .milliseconds(250))
            }
        case .app(let id):
            connection = ClientConnection(channel: channel, kind: kind, identity: id)
        }
        connections.add(connection)
        return connection
    }

    func connectionClosed(_ connection: ClientConnection) {
        loop.assertInEventLoop()
        guard connections.remove(connection) else { return }
        connection.helloDeadline?.cancel()
        // Opens still queued for this caller are dropped: nobody would read their answers.
        // Those an app already has end in their own time; `lsctl history` records both.
        perform(machine.withdraw(connection.waiting))
        for entry in executor.ledger.callerLeft(connection.waiting, owed: machine.owed(among: connection.waiting)) {
            executor.history.recordWithdrawn(source: entry.source, scheme: entry.scheme, app: entry.app)
        }
        for token in connection.reservations { reservations[token] = nil }
        if let app = connection.appID, connections.detach(app, ifItIs: connection) != nil {
            perform(machine.disconnected(app: app))
        }
        flushPending()
    }

    /// Logs a limit being reached (once, then at most once a minute with a count).
    func limitReached(_ limit: PeerLimit, _ detail: String) {
        connections.limitReached(limit, detail)
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
        for token in connection.reservations { reservations[token] = nil }
        connection.reservations.removeAll()
        closeIfDone(connection)
    }

    /// Closes a connection whose peer finished sending once nothing is owed to it.
    func closeIfDone(_ connection: ClientConnection) {
        guard connection.finishedSending || connection.closing, connection.waiting.isEmpty,
              pasteboardTraffic.lanes[ObjectIdentifier(connection)] == nil else { return }
        flushPending()
        connection.channel.close(promise: nil)
    }
}
