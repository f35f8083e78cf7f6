#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One daemon per state folder: an exclusive `flock` on `launchservicesd.lock` in it, taken
/// before anything reads or writes the databases there and held for the daemon's life
/// (the kernel lets go when the process ends, however it ends, so a crash leaves no stale
/// lock). Two daemons on one folder would each rewrite the other's registry: folder apps
/// withdrawn, registration times lost, a later app taking a scheme. The file says who holds
/// it (`pid N`, `socket PATH`), so a refused daemon can name the holder.
final class StateFolderLock: Sendable {
    static let fileName = "launchservicesd.lock"

    let path: String
    private let descriptor: Int32

    /// Takes the lock for a daemon serving `socket`, or throws naming the daemon that holds it.
    init(folder: String, socket: String) throws {
        path = folder + "/" + Self.fileName
        // Close-on-exec: an app the daemon starts must not inherit (and outlive it with) the lock.
        // No symbolic link is followed: the lock is the folder's own file.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw DaemonError("cannot open \(path) to lock the state folder: \(String(cString: strerror(errno))); check the folder's owner and mode, or pass another --state")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            let holder = Self.holder(fd)
            close(fd)
            if failure == EWOULDBLOCK {
                throw DaemonError("another launchservicesd (\(holder)) already uses the state folder \(folder); stop it first (systemctl --user stop launchservicesd, or kill that pid), or pass another --state")
            }
            throw DaemonError("cannot lock \(path): \(String(cString: strerror(failure))); pass another --state")
        }
        let text = Array("pid \(getpid())\nsocket \(socket)\n".utf8)
        // Best effort: the lock itself is what keeps a second daemon out; the text only names us.
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Who holds the lock, as its file says: `pid N, serving PATH`.
    private static func holder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let text = count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
        var pid: String?
        var socket: String?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("pid ") { pid = String(line.dropFirst(4)) }
            if line.hasPrefix("socket ") { socket = String(line.dropFirst(7)) }
        }
        guard let pid else { return "starting: its pid is not written yet" }
        return "pid \(pid)" + (socket.map { ", serving \($0)" } ?? "")
    }
}
