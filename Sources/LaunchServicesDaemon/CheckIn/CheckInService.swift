import CLaunchServicesShim
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Apps started by hand: the check-in on the socket, proven before anything is trusted,
/// then the app registered, watched and driven like one the daemon launched. Confined to
/// the loop.
final class CheckInService {
    private let loop: EventLoop
    private let logger: Logger
    private let registry: RegistryService
    private let connections: ConnectionTable
    private let supervisor: ProcessSupervisor
    private let lifecycle: AppLifecycle

    init(loop: EventLoop, logger: Logger, registry: RegistryService, connections: ConnectionTable, supervisor: ProcessSupervisor, lifecycle: AppLifecycle) {
        self.loop = loop
        self.logger = logger
        self.registry = registry
        self.connections = connections
        self.supervisor = supervisor
        self.lifecycle = lifecycle
    }

    /// An app started by hand declares itself: its bundle must validate, and the connecting
    /// process must be running that bundle's executable (`CheckInVerification`, off the
    /// loop), so no process can speak for an app it is not. The app is registered (and
    /// kept, like `lsctl register`), watched through a pidfd, and driven on this connection.
    func attach(_ connection: ClientConnection, bundlePath: String) {
        guard let pid = connection.peerPID else { return refuse(connection, .notPermitted, "the connecting process could not be identified") }
        // The pidfd first: whatever the checks below read stays about this very process.
        let pidfd = ls_pidfd_open(pid)
        guard pidfd >= 0 else { return refuse(connection, .notPermitted, "process \(pid) cannot be watched") }
        connection.checkingIn = true
        let verification = NIOLoopBound((self, connection), eventLoop: loop)
        registry.files.async {
            let verified = Result { () throws(CheckInVerification.Refusal) in try CheckInVerification.verify(pid: pid, bundlePath: bundlePath) }
            verification.eventLoop.execute {
                let (service, connection) = verification.value
                connection.checkingIn = false
                switch verified {
                case .failure(let refusal):
                    close(pidfd)
                    service.refuse(connection, refusal.code, refusal.message)
                case .success(let bundle):
                    service.checkIn(connection, bundle: bundle, pid: pid, pidfd: pidfd)
                }
            }
        }
    }

    /// A verified app: registered (saved first, off the loop, if it is new), then watched
    /// and driven on its connection, unless it went away or another copy got there first.
    private func checkIn(_ connection: ClientConnection, bundle: AppBundle, pid: Int32, pidfd: Int32, saved: Int64? = nil) {
        guard !connection.closing, connections.contains(connection), ls_pidfd_send_signal(pidfd, 0) == 0 else {
            close(pidfd)
            return
        }
        let registered = registry.registry.apps[bundle.id]
        if let registered, registered.path != bundle.path {
            close(pidfd)
            return refuse(connection, .invalidRequest, "'\(bundle.id)' is already registered from \(registered.path), not \(bundle.path)")
        }
        guard lifecycle.machine.mayAttach(app: bundle.id), connections.app(bundle.id) == nil else {
            close(pidfd)
            return refuse(connection, .invalidRequest, "\(bundle.id) is already running")
        }
        if registered == nil, saved == nil {
            // A newcomer is registered now: it opens no scheme another app already holds.
            let time = registry.issueTime()
            connection.checkingIn = true
            registry.persist({ try $0.save(bundle, source: .manual, registeredAt: time) }) { [self] error in
                connection.checkingIn = false
                if let error {
                    close(pidfd)
                    return refuse(connection, .unavailable, "cannot save the registration of \(bundle.id): \(error)")
                }
                checkIn(connection, bundle: bundle, pid: pid, pidfd: pidfd, saved: time)
            }
            return
        }
        registry.register(bundle, source: registry.isRegisteredByHand(bundle.id) || registered == nil ? .manual : .folder,
                          at: registry.registeredAt(bundle.id) ?? saved ?? registry.issueTime())
        supervisor.track(AppProcess(bundleID: bundle.id, pid: pid, pidfd: pidfd))
        connection.kind = .app(bundle.id)
        connection.identity = bundle.id
        connection.greeted = true
        connections.attach(connection, as: bundle.id)
        logger.notice("\(bundle.id) (pid \(pid), started by hand) checked in", metadata: ["bundle_id": "\(bundle.id)", "pid": "\(pid)"])
        connections.send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: bundle.id)), to: connection)
        lifecycle.event(flush: true) { $0.attached(app: bundle.id, pid: pid, now: $1) }
    }

    private func refuse(_ connection: ClientConnection, _ code: OpenErrorCode, _ text: String) {
        // The text may quote the bundle path the process declared: escaped, like any path.
        let text = TerminalText.escapingControls(text)
        logger.warning("app check-in refused: \(text)")
        connection.closing = true
        ConnectionTable.refuse(connection.channel, with: OpenError(code, text))
    }
}
