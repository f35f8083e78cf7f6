import LaunchServicesSystemd
import Logging
import NIOCore

/// Owns what systemd hears from the daemon: READY once serving, `STATUS=` kept current, and
/// `WATCHDOG=1` at half the `WatchdogSec=` interval. The pings come from a task on the
/// daemon's own loop, so a stalled loop stops pinging and systemd notices. Loop-confined.
final class ServiceManagerStatus {
    private var task: RepeatedTask?
    private var lastStatus = ""

    /// Starts reporting, if a service manager supervises the daemon; `status` is read on the loop.
    func start(on loop: EventLoop, logger: Logger, status: @escaping () -> String) {
        guard SystemdNotifier.isSupervised else { return }
        let watchdog = SystemdNotifier.watchdogInterval
        // Half the watchdog interval, and at least once a second so STATUS stays current.
        let interval = min(watchdog.map { $0 / 2 } ?? .seconds(1), .seconds(1))
        lastStatus = status()
        SystemdNotifier.notify("READY=1\nSTATUS=\(lastStatus)")
        let reporter = NIOLoopBound((self, status), eventLoop: loop)
        task = loop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(Int64(interval.nanoseconds))) { _ in
            let (this, status) = reporter.value
            var assignments: [String] = []
            if watchdog != nil { assignments.append("WATCHDOG=1") }
            let current = status()
            if current != this.lastStatus {
                this.lastStatus = current
                assignments.append("STATUS=\(current)")
            }
            if !assignments.isEmpty { SystemdNotifier.notify(assignments.joined(separator: "\n")) }
        }
        logger.debug("supervised by systemd; watchdog \(watchdog.map { "\($0)" } ?? "off")")
    }

    /// Says the daemon is stopping and stops the pings.
    func stop() {
        SystemdNotifier.notify("STOPPING=1\nSTATUS=stopping")
        task?.cancel()
    }
}
