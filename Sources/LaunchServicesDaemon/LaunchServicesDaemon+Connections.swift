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
extension LaunchServicesDaemon {
    func connectionOpened(channel: Channel, kind: ClientConnection.Kind, peer: (pid: Int32, uid: UInt32)?) -> ClientConnection? {
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
                Self.refuse(channel, with: OpenError(.notPermitted, "launchservicesd of uid \(getuid()) refuses peers of uid \(peer.uid)"))
                return nil
            }
            let limits = configuration.connectionLimits
            guard socketConnections < limits.maximumPerUser else {
                limitReached(.connectionsPerUser, "uid \(peer.uid) holds \(socketConnections) connections; pid \(peer.pid) was refused")
                Self.refuse(channel, with: OpenError(.unavailable, "launchservicesd already serves \(socketConnections) connections of uid \(peer.uid), the limit (connections.maximumPerUser); close idle ones and retry"), linger: .milliseconds(250))
                return nil
            }
            // A process an app started speaks as that app (its pid, or its nearest app
            // ancestor); one an app let go (adopted by the daemon) as an unknown app.
            let origin: ProcessAncestry.Origin = appByPID[peer.pid].map { .app($0) }
                ?? (hasSpawned ? ProcessAncestry.origin(of: peer.pid, daemon: getpid()) { appByPID[$0] } : .user)
            let identity: String
            switch origin {
            case .app(let app): identity = app
            case .orphanOfApp: identity = Self.orphanIdentity
            case .user: identity = Self.shellIdentity
            }
            connection = ClientConnection(channel: channel, kind: .socket, identity: identity)
            connection.peerPID = peer.pid
            connection.descendsFromApp = origin != .user
            socketConnections += 1
            connection.helloDeadline = loop.scheduleTask(in: .nanoseconds(Int64(limits.firstMessageTimeout.nanoseconds))) { [self] in
                guard !connection.greeted, !connection.closing else { return }
                limitReached(.firstMessage, "pid \(peer.pid) said nothing for \(limits.firstMessageTimeout)")
                connection.closing = true
                Self.refuse(channel, with: OpenError(.protocolError, "no hello within \(limits.firstMessageTimeout) of connecting (connections.firstMessageSeconds); say hello first"), linger: .milliseconds(250))
            }
        case .app(let id):
            connection = ClientConnection(channel: channel, kind: kind, identity: id)
            appConnections[id] = connection
        }
        connections[ObjectIdentifier(channel)] = connection
        return connection
    }

    func connectionClosed(_ connection: ClientConnection) {
        loop.assertInEventLoop()
        guard connections.removeValue(forKey: ObjectIdentifier(connection.channel)) != nil else { return }
        if connection.peerPID != nil { socketConnections -= 1 }
        connection.helloDeadline?.cancel()
        unflushed[ObjectIdentifier(connection.channel)] = nil
        // Opens still queued for this caller are dropped: nobody would read their answers.
        machine.withdraw(connection.waiting)
        for token in connection.waiting {
            waiting[token] = nil
            inFlight[token] = nil
        }
        for token in connection.reservations { reservations[token] = nil }
        if let app = connection.appID, appConnections[app] === connection {
            appConnections[app] = nil
            perform(machine.disconnected(app: app))
        }
        flushPending()
    }

    /// Logs a limit being reached (once, then at most once a minute with a count).
    func limitReached(_ limit: PeerLimit, _ detail: String) {
        limitLog.reached(limit, detail, logger: logger)
    }

    func protocolViolation(_ text: String, on connection: ClientConnection) {
        loop.assertInEventLoop()
        guard !connection.closing else { return }
        connection.closing = true
        logger.warning("protocol violation; closing the connection: \(text)", metadata: ["peer": "\(connection.identity)"])
        Self.refuse(connection.channel, with: OpenError(.protocolError, text))
    }

    /// Sends a last `failure` (id 0) and ends the connection so that the peer reads it: the
    /// daemon stops writing, then discards what the peer still sends until it closes (at most
    /// 2 s). Closing at once would throw away unread bytes and make the kernel reset the
    /// connection, and the peer would see ECONNRESET instead of the reason.
    static func refuse(_ channel: Channel, with error: OpenError, linger: TimeAmount = .seconds(2)) {
        let frame = Frame.encode(Envelope(id: 0, .failure(error)))
        channel.writeAndFlush(channel.allocator.buffer(bytes: frame)).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
            channel.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
        }
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
