import CLaunchServicesShim
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// One message of a launch's waiter process (see desktop_launch.c), in the order it sends them:
/// `started` or `failed`, then `exited` or `detached`, then `ended` when it is gone.
enum DesktopWaiterReport: Sendable, Equatable {
    /// The app runs; `pidfd` is the daemon's to watch and close. `forwarderError` is the
    /// errno of a stderr forwarder that could not start (the app's stderr then went
    /// straight to its destination), or 0.
    case started(pid: Int32, forwarderPID: Int32, forwarderError: Int32, pidfd: Int32)
    /// Nothing runs the app: `stage` is the shim's LS_DESKTOP_STAGE_*.
    case failed(errno: Int32, stage: Int32)
    /// The app exited within the grace, with this wait status (not yet reaped).
    case exited(status: Int32)
    /// The grace ended with the app alive.
    case detached
    /// The waiter is gone (end of its socket).
    case ended
}

/// Reads a waiter's reports off the event loop: a Dispatch read source on the daemon's end
/// of the report socket (non-blocking; one message per report, a pidfd passed with
/// `started`), handing each batch to `deliver`, which hops to the loop. At the end of the
/// socket it delivers `ended` and closes it. A waiter sends at most three messages, so a
/// batch is small.
final class DesktopWaiterReports: Sendable {
    static let queue = DispatchQueue(label: "launchservicesd.desktop")
    /// The Linux Dispatch module does not mark sources `Sendable`; this one is only resumed
    /// here and cancelled, both safe from any thread.
    nonisolated(unsafe) private let source: DispatchSourceRead

    init(fd: Int32, deliver: @escaping @Sendable ([DesktopWaiterReport]) -> Void) {
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: Self.queue)
        source.setEventHandler { [source] in
            var reports: [DesktopWaiterReport] = []
            while true {
                var report = ls_desktop_report()
                var pidfd: Int32 = -1
                let rc = ls_desktop_read_report(fd, &report, &pidfd)
                if rc == 0 { break }
                if rc < 0 {
                    reports.append(.ended)
                    source.cancel()
                    break
                }
                switch report.kind {
                case Int32(LS_DESKTOP_STARTED):
                    reports.append(.started(pid: report.pid, forwarderPID: report.forwarder_pid, forwarderError: report.value, pidfd: pidfd))
                    continue
                case Int32(LS_DESKTOP_FAILED): reports.append(.failed(errno: report.value, stage: report.stage))
                case Int32(LS_DESKTOP_EXITED): reports.append(.exited(status: report.value))
                case Int32(LS_DESKTOP_DETACHED): reports.append(.detached)
                default: break
                }
                if pidfd >= 0 { close(pidfd) }
            }
            if !reports.isEmpty { deliver(reports) }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    /// Stops reading (the outcome is known, or the daemon stops) and closes the socket; a
    /// pidfd still in flight is closed by the kernel with it.
    func cancel() {
        source.cancel()
    }
}
