import CLaunchServicesShim
#if canImport(Glibc)
import Glibc
#endif

/// Processes apps started and let go, which the daemon adopts as a child subreaper: it reaps
/// them when they exit (so they leave no zombies) and ends them when it stops (so nothing
/// the apps started outlives the daemon's own shutdown either).
///
/// The daemon's children are its apps and these; an app's pid is always excluded, since its
/// exit belongs to its pidfd watch. A child's pid cannot be reused before the daemon reaps
/// it, so signalling one by pid is safe.
enum AdoptedProcesses {
    /// Makes the daemon the subreaper of everything it starts. Returns an error text on failure.
    static func adopt() -> String? {
        ls_become_subreaper() == 0 ? nil : "cannot become a child subreaper: \(String(cString: strerror(errno)))"
    }

    /// The daemon's children that are not apps.
    static func current(excluding apps: (Int32) -> Bool) -> [Int32] {
        ProcessAncestry.ownChildren().filter { !apps($0) }
    }

    /// Reaps those that have exited; returns how many.
    @discardableResult
    static func reapExited(excluding apps: (Int32) -> Bool) -> Int {
        var reaped = 0
        for pid in current(excluding: apps) where ProcessAncestry.statFields(of: pid)?.state == UInt8(ascii: "Z") {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { reaped += 1 }
        }
        return reaped
    }

    /// Kills and reaps every one of them, and then those the killed ones leave behind (their
    /// own children become the daemon's as they die), for at most `rounds` rounds and
    /// `seconds` in all (a process stuck in the kernel may take long to die). Returns how many
    /// were ended. Used when the daemon stops.
    static func endAll(excluding apps: (Int32) -> Bool, rounds: Int = 64, seconds: Double = 2) -> Int {
        var ended = 0
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + seconds
        func now() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
        for _ in 0..<rounds {
            var pending = Set(signalAll(SIGKILL, excluding: apps))
            if pending.isEmpty { break }
            while !pending.isEmpty && now() < end {
                for pid in pending {
                    var status: Int32 = 0
                    if waitpid(pid, &status, WNOHANG) == pid {
                        pending.remove(pid)
                        ended += 1
                    }
                }
                if !pending.isEmpty { usleep(2_000) }
            }
            if now() >= end { break }
        }
        return ended
    }

    /// Sends `signal` to every one of them; returns their pids.
    @discardableResult
    static func signalAll(_ signal: Int32, excluding apps: (Int32) -> Bool) -> [Int32] {
        let pids = current(excluding: apps)
        for pid in pids { kill(pid, signal) }
        return pids
    }
}
