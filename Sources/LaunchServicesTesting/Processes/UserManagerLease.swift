#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOConcurrencyHelpers

/// One private `systemd --user` manager at a time on this machine. Managers of the same uid
/// share one cgroup tree (each takes the cgroup it starts in as its root), so two that run
/// units of the same name (`launchservicesd.service`) share those units' cgroups, and one
/// stopping its unit kills the other's daemon. Suites run in parallel, and so may other
/// checkouts' test runs: the lease is an exclusive `flock` on a file every holder opens
/// anew, so it excludes other threads of this process and other processes alike.
///
/// The holder also has `/run/systemd/system`, which a manager checks for when it starts
/// (where PID 1 is not systemd, a CI container, it is made here and removed at `release`).
public final class UserManagerLease: Sendable {
    public static let lockFile = "/tmp/swift-launch-services-user-manager.lock"
    public static let marker = "/run/systemd/system"
    /// The locked file's descriptor; -1 once released.
    private let descriptor: NIOLockedValueBox<Int32>
    private let madeMarker: Bool

    /// Waits (at most `seconds`) until no other manager holds the lease.
    public init(within seconds: TimeInterval = 600) throws {
        let fd = open(Self.lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw ProcessError("cannot open \(Self.lockFile): \(String(cString: strerror(errno)))") }
        let deadline = Date().addingTimeInterval(seconds)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else {
                close(fd)
                throw ProcessError("another systemd --user manager of the tests held \(Self.lockFile) for \(seconds) s")
            }
            // A test's own thread waiting for another test's manager; bounded by the deadline.
            usleep(50_000)
        }
        descriptor = NIOLockedValueBox(fd)
        if FileManager.default.fileExists(atPath: Self.marker) {
            madeMarker = false
        } else {
            do {
                try FileManager.default.createDirectory(atPath: Self.marker, withIntermediateDirectories: true)
            } catch {
                close(fd)
                throw error
            }
            madeMarker = true
        }
    }

    /// Removes the marker if this lease made it, and lets the next manager start. Once.
    public func release() {
        descriptor.withLockedValue { fd in
            guard fd >= 0 else { return }
            if madeMarker { try? FileManager.default.removeItem(atPath: Self.marker) }
            close(fd)
            fd = -1
        }
    }
}
