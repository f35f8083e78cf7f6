import CLaunchServicesShim
import LaunchServicesCore
#if canImport(Glibc)
import Glibc
#endif

/// An app's pidfd on the app watch thread: readable once the process has exited.
/// The exit is reported after the app's drain has taken what was left in its pipe, so a
/// caller told "exited" finds the app's last lines in its log.
final class ExitWatch: AppWatched {
    /// The process whose pidfd is watched: held, so the descriptor (the process object's,
    /// closed when it is released) stays open while it is registered.
    let process: AppProcess
    let output: AppLogDrain?
    let onExit: @Sendable (ExitStatus) -> Void

    init(process: AppProcess, output: AppLogDrain?, onExit: @escaping @Sendable (ExitStatus) -> Void) {
        self.process = process
        self.output = output
        self.onExit = onExit
    }

    func readable(on thread: AppWatchThread) -> AppWatchNext {
        var code: Int32 = 0
        var signaled: Int32 = 0
        let rc = ls_pidfd_reap(process.pidfd, &code, &signaled)
        guard rc != 0 else { return .keep }
        output?.finish(on: thread)
        onExit(rc < 0 ? .exited(-1) : (signaled != 0 ? .signaled(code) : .exited(code)))
        return .stop
    }

    /// The pidfd stays open: it belongs to the process object, which may still be asked to
    /// signal through it (`AppProcess.signal`) until the loop has heard of the exit. Closed
    /// here, its number could be reused by the next launch's pidfd first, and a signal meant
    /// for the app that ended would reach the new one.
    func removed() {}
}
