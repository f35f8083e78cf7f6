import CLaunchServicesShim
import Dispatch
import LaunchServicesCore
#if canImport(Glibc)
import Glibc
#endif

/// Watches a desktop app the daemon is not the parent of, through its pidfd: the pidfd
/// becomes readable when the process exits, whoever reaps it, and the status comes from
/// `ls_pidfd_exit_status` (the pidfd's own record on Linux 6.15 and later, else the zombie's
/// /proc entry; `nil` when neither can say). Calls `onExit` once, off the loop, then closes
/// the pidfd; `cancel` closes it without a call.
final class DesktopExitWatch: Sendable {
    /// See `DesktopWaiterReports.source`.
    nonisolated(unsafe) private let source: DispatchSourceRead

    init(pidfd: Int32, pid: Int32, onExit: @escaping @Sendable (ExitStatus?) -> Void) {
        source = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: DesktopWaiterReports.queue)
        source.setEventHandler { [source] in
            guard !source.isCancelled else { return }
            var status: Int32 = 0
            let known = ls_pidfd_exit_status(pidfd, pid, &status) == 1
            source.cancel()
            onExit(known ? Self.exitStatus(status) : nil)
        }
        source.setCancelHandler { close(pidfd) }
        source.resume()
    }

    func cancel() {
        source.cancel()
    }

    /// Whether the process behind `pidfd` has exited, without waiting.
    static func hasExited(pidfd: Int32) -> Bool {
        var watch = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&watch, 1, 0) == 1
    }

    static func exitStatus(_ status: Int32) -> ExitStatus {
        status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
    }
}
