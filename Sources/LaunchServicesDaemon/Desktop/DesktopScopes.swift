import Dispatch
import LaunchServicesSystemd
import Synchronization

/// Puts each desktop app the daemon starts into a transient scope of the systemd user
/// manager (`TransientScope`), so that stopping or restarting `launchservicesd.service`
/// (whose default `KillMode=control-group` ends everything in its control group) never ends
/// the user's apps, and each app is found by its own unit name.
///
/// The calls run on a serial queue of their own, never on the event loop: sd-bus blocks and
/// is not thread-safe, so each request makes, uses and frees its own connection on that
/// queue, each bounded by `scopeTimeout`. At most `maximumScopeRequestsWaiting` wait; beyond
/// that a launch gets no scope (its app still runs). Outside systemd (no manager socket in
/// `$XDG_RUNTIME_DIR`) nothing is asked.
///
/// Between the spawn and the manager's move an app runs in the daemon's own group; children
/// it starts in that moment stay there. Desktop environments that create scopes after the
/// spawn (as GNOME Shell does) have the same window.
final class DesktopScopes: Sendable {
    enum Result: Sendable, Equatable {
        /// The manager accepted the unit; its job moves the processes.
        case started(unit: String)
        /// No user manager runs (or scopes are turned off).
        case notUnderSystemd
        /// The manager refused or did not answer in time.
        case failed(unit: String, reason: String)
        /// Too many requests wait already.
        case busy
    }

    private let queue = DispatchQueue(label: "launchservicesd.scopes")
    private let waiting = Mutex(0)
    private let runtimeDirectory: String?
    private let settings: DesktopLaunchSettings

    init(settings: DesktopLaunchSettings, runtimeDirectory: String?) {
        self.settings = settings
        self.runtimeDirectory = settings.scopes ? runtimeDirectory.flatMap { $0.isEmpty ? nil : $0 } : nil
    }

    /// Asks for scope `unit` holding `pids`; `done` is called once, on the scope queue.
    func request(unit: String, description: String, pids: [Int32], done: @escaping @Sendable (Result) -> Void) {
        guard let runtimeDirectory else {
            done(.notUnderSystemd)
            return
        }
        let limit = settings.maximumScopeRequestsWaiting
        let admitted = waiting.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            done(.busy)
            return
        }
        queue.async { [self] in
            defer { waiting.withLock { $0 -= 1 } }
            guard TransientScope.userManagerIsPresent(runtimeDirectory: runtimeDirectory) else {
                done(.notUnderSystemd)
                return
            }
            let (seconds, attoseconds) = settings.scopeTimeout.components
            let microseconds = UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000
            do {
                _ = try TransientScope.start(name: unit, description: description, slice: settings.scopeSlice, pids: pids,
                                             address: TransientScope.address(socketPath: TransientScope.socketPath(runtimeDirectory: runtimeDirectory)),
                                             timeoutMicroseconds: microseconds)
                done(.started(unit: unit))
            } catch {
                done(.failed(unit: unit, reason: "\(error)"))
            }
        }
    }
}
