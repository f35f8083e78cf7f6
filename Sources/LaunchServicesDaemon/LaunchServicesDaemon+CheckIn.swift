import CLaunchServicesShim
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Apps started by hand: the check-in on the socket, proven before anything is trusted.
extension LaunchServicesDaemon {
    /// An app started by hand declares itself: its bundle must validate, and the connecting
    /// process must be running that bundle's executable (`CheckInVerification`, off the
    /// loop), so no process can speak for an app it is not. The app is registered (and
    /// kept, like `lsctl register`), watched through a pidfd, and driven on this connection.
    func attach(_ connection: ClientConnection, bundlePath: String) {
        guard let pid = connection.peerPID else { return refuseCheckIn(connection, .notPermitted, "the connecting process could not be identified") }
        // The pidfd first: whatever the checks below read stays about this very process.
        let pidfd = ls_pidfd_open(pid)
        guard pidfd >= 0 else { return refuseCheckIn(connection, .notPermitted, "process \(pid) cannot be watched") }
        connection.checkingIn = true
        fileQueue.async { [self] in
            let verified = Result { () throws(CheckInVerification.Refusal) in try CheckInVerification.verify(pid: pid, bundlePath: bundlePath) }
            loop.execute { [self] in
                connection.checkingIn = false
                let bundle: AppBundle
                switch verified {
                case .failure(let refusal):
                    close(pidfd)
                    return refuseCheckIn(connection, refusal.code, refusal.message)
                case .success(let value):
                    bundle = value
                }
                guard !connection.closing, connections[ObjectIdentifier(connection.channel)] != nil, ls_pidfd_send_signal(pidfd, 0) == 0 else {
                    close(pidfd)
                    return
                }
                if let existing = registry.apps[bundle.id], existing.path != bundle.path {
                    close(pidfd)
                    return refuseCheckIn(connection, .invalidRequest, "'\(bundle.id)' is already registered from \(existing.path), not \(bundle.path)")
                }
                guard machine.state(of: bundle.id) == .notRunning, appConnections[bundle.id] == nil else {
                    close(pidfd)
                    return refuseCheckIn(connection, .invalidRequest, "\(bundle.id) is already running")
                }
                if registry.apps[bundle.id] == nil {
                    do {
                        try store?.save(bundle, source: .manual)
                    } catch {
                        close(pidfd)
                        return refuseCheckIn(connection, .unavailable, "cannot save the registration of \(bundle.id): \(error)")
                    }
                    sources[bundle.id] = .manual
                }
                registry.register(bundle)
                let process = AppProcess(bundleID: bundle.id, pid: pid, pidfd: pidfd)
                processes[bundle.id] = process
                appByPID[pid] = bundle.id
                process.watchExit(queue: exitQueue) { [self] status in
                    loop.execute { self.processExited(process, status: status) }
                }
                connection.kind = .app(bundle.id)
                connection.identity = bundle.id
                connection.greeted = true
                appConnections[bundle.id] = connection
                logger.notice("\(bundle.id) (pid \(pid), started by hand) checked in", metadata: ["bundle_id": "\(bundle.id)", "pid": "\(pid)"])
                send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: bundle.id)), to: connection)
                perform(machine.attached(app: bundle.id, pid: pid, now: now))
                flushPending()
            }
        }
    }

    private func refuseCheckIn(_ connection: ClientConnection, _ code: OpenErrorCode, _ text: String) {
        logger.warning("app check-in refused: \(text)")
        connection.closing = true
        Self.refuse(connection.channel, with: OpenError(code, text))
    }
}
