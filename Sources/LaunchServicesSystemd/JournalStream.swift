import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// A stream connection to journald (`sd_journal_stream_fd`): what a process writes to the
/// descriptor becomes journal entries, one per line, as systemd does for a service's
/// stdout and stderr.
///
/// The stream protocol carries only a syslog identifier, a default priority and whether a
/// `<N>` prefix on a line sets that line's priority; it has no room for other fields, so
/// entries read from a stream are found by their identifier (`journalctl --user -t ID`).
public enum JournalStream {
    /// A new stream whose entries carry `SYSLOG_IDENTIFIER=identifier` and `priority`
    /// (0 emerg … 7 debug) unless a line begins with `<N>` and `levelPrefix` is set.
    /// `nil` when journald cannot be reached. The caller owns (and closes) the descriptor,
    /// which is close-on-exec.
    public static func open(identifier: String, priority: Int32, levelPrefix: Bool) -> Int32? {
        let fd = sd_journal_stream_fd(identifier, priority, levelPrefix ? 1 : 0)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// Whether journald accepts a stream now (one is opened and closed).
    public static var isReachable: Bool {
        guard let fd = open(identifier: "launchservicesd", priority: 6, levelPrefix: false) else { return false }
        close(fd)
        return true
    }
}
