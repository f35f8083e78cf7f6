import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notification protocol, through libsystemd's `sd_notify`.
/// Outside systemd (no `NOTIFY_SOCKET`) every call is a no-op, so the daemon behaves the
/// same in the foreground.
public enum SystemdNotifier {
    /// Whether a service manager listens for notifications.
    public static var isSupervised: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends newline-separated `KEY=value` assignments (`READY=1`, `STATUS=…`, `WATCHDOG=1`,
    /// `STOPPING=1`). Returns whether the manager received them.
    @discardableResult
    public static func notify(_ assignments: String) -> Bool {
        send(assignments) > 0
    }

    /// `notify` with `sd_notify`'s own result: positive once sent, 0 with no manager
    /// listening, a negative errno when it failed (`-EMFILE` or `-ENFILE`: no descriptor was
    /// free for the socket it opens for each message).
    public static func send(_ assignments: String) -> Int32 {
        sd_notify(0, assignments)
    }

    /// The watchdog interval (`WatchdogSec=`) when the manager expects pings, else `nil`.
    public static var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }
}

/// Sockets handed over by socket activation (`sd_listen_fds`).
public enum SocketActivation {
    /// The listening Unix stream socket passed by the manager, if any. The environment
    /// variables are unset so that launched apps do not inherit them.
    public static func listeningUnixSocket() -> Int32? {
        let count = sd_listen_fds(1)
        guard count > 0 else { return nil }
        for fd in ls_sd_listen_fds_start..<(ls_sd_listen_fds_start + count) where sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 {
            return fd
        }
        return nil
    }

    /// The filesystem path a Unix socket is bound to (`getsockname`).
    public static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}
