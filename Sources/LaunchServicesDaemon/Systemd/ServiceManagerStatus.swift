#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesSystemd
import Logging
import NIOCore

/// Owns what systemd hears from the daemon: READY once serving, `STATUS=` kept current, and
/// `WATCHDOG=1` at half the `WatchdogSec=` interval. The pings come from a task on the
/// daemon's own loop, so a stalled loop stops pinging and systemd notices. A working daemon
/// at its descriptor limit keeps pinging: `sd_notify` opens a socket for every message, so
/// one that failed for want of a descriptor is sent again with the descriptor reserve
/// released for it. Loop-confined.
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
        Self.notify("READY=1\nSTATUS=\(lastStatus)")
        let reporter = NIOLoopBound((self, status), eventLoop: loop)
        task = loop.scheduleRepeatedTask(initialDelay: .zero, delay: TimeAmount(interval)) { _ in
            let (this, status) = reporter.value
            var assignments: [String] = []
            if watchdog != nil { assignments.append("WATCHDOG=1") }
            let current = status()
            if current != this.lastStatus {
                this.lastStatus = current
                assignments.append("STATUS=\(current)")
            }
            if !assignments.isEmpty { Self.notify(assignments.joined(separator: "\n")) }
        }
        logger.debug("supervised by systemd; watchdog \(watchdog.map { "\($0)" } ?? "off")")
    }

    /// Says the daemon is stopping and stops the pings.
    func stop() {
        Self.notify("STOPPING=1\nSTATUS=stopping")
        task?.cancel()
    }

    /// `sd_notify` (`send`), and once more with the descriptor reserve released if it found
    /// no descriptor for its socket, so it reaches systemd even at the descriptor limit.
    @discardableResult
    static func notify(_ assignments: String, reserve: DescriptorReserve = .shared, send: (String) -> Int32 = SystemdNotifier.send) -> Bool {
        reserve.retryingAtLimit { send(assignments) } outOfDescriptors: { $0 == -EMFILE || $0 == -ENFILE } > 0
    }
}
