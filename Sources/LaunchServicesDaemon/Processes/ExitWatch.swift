import CLaunchServicesShim
import LaunchServicesCore
#if canImport(Glibc)
import Glibc
#endif

/// A launched app's pidfd on the app watch thread: readable once the process has exited.
/// The exit is reported after the app's drain has taken what was left in its pipe, so a
/// caller told "exited" finds the app's last lines in its log.
final class ExitWatch: AppWatched {
    let pidfd: Int32
    let output: AppLogDrain?
    let onExit: @Sendable (ExitStatus) -> Void

    init(pidfd: Int32, output: AppLogDrain?, onExit: @escaping @Sendable (ExitStatus) -> Void) {
        self.pidfd = pidfd
        self.output = output
        self.onExit = onExit
    }

    func readable(on thread: AppWatchThread) -> AppWatchNext {
        var code: Int32 = 0
        var signaled: Int32 = 0
        let rc = ls_pidfd_reap(pidfd, &code, &signaled)
        guard rc != 0 else { return .keep }
        output?.finish(on: thread)
        onExit(rc < 0 ? .exited(-1) : (signaled != 0 ? .signaled(code) : .exited(code)))
        return .stop
    }

    func removed() { close(pidfd) }
}
