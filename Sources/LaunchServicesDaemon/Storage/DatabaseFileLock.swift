#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Keeps other processes out of a state database while it is checked and, if damaged, set
/// aside; or names the process that holds it. The check reads the file without SQLite's
/// locks (`DatabaseCheck`), so a file another process is writing at that moment (an `sqlite3`
/// shell, an older daemon without the state folder's lock) could be read half-written, judged
/// damaged, and renamed from under its writer. SQLite's own locks are POSIX advisory locks on
/// the file (a connection in WAL mode holds a read lock on it for as long as it is open, a
/// writer in rollback mode a write lock), so the daemon takes a write lock over the whole
/// file: it is granted only when no other process holds any SQLite lock on it, and while it is
/// held no other SQLite connection can begin to read or write the file. It is an open file
/// description lock (`F_OFD_SETLK`), so the check's own SQLite connection opening and closing
/// the file does not drop it, as it would a classic POSIX lock of the process.
final class DatabaseFileLock {
    /// `F_OFD_SETLK` (Linux 3.15): Glibc defines it only with `_GNU_SOURCE`, which Swift's
    /// Glibc module does not set.
    private static let ofdSetLock: Int32 = 37

    private var descriptor: Int32

    /// Takes the lock on `path`, or throws a `StorageError` naming the process that holds one
    /// (`cannot check …/registry.sqlite: it is in use by process 1234 (sqlite3) …`). Returns
    /// `nil` when there is nothing to lock (no file; or one this process cannot open, which the
    /// check then names) and when the file can only be opened read-only (then it is only
    /// probed: another process's lock is still found and named, but none is held).
    static func take(_ path: String) throws -> DatabaseFileLock? {
        let writable = open(path, O_RDWR | O_CLOEXEC)
        guard writable >= 0 else {
            // A write lock needs a descriptor open for writing; a file this process may only
            // read can still be asked who holds it.
            let readable = open(path, O_RDONLY | O_CLOEXEC)
            guard readable >= 0 else { return nil }
            defer { close(readable) }
            if let holder = holder(readable) { throw inUse(path, holder) }
            return nil
        }
        var lock = Self.wholeFile(F_WRLCK)
        if fcntl(writable, ofdSetLock, &lock) == 0 { return DatabaseFileLock(descriptor: writable) }
        let failure = errno
        defer { close(writable) }
        if failure == EAGAIN || failure == EACCES {
            throw inUse(path, holder(writable) ?? .unknown)
        }
        // No open file description locks (EINVAL: a kernel before 3.15): probe only.
        if let holder = holder(writable) { throw inUse(path, holder) }
        return nil
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { release() }

    /// Lets go (closing the descriptor ends an open file description lock), before the
    /// daemon's own SQLite connection opens the file.
    func release() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// Who holds a lock on the file.
    enum Holder: Equatable {
        case process(pid_t)
        /// An open file description lock (the kernel does not say whose), a process in another
        /// PID namespace, or one that let go between the refusal and the question.
        case unknown
    }

    /// The process holding a lock that conflicts with a write lock over the whole file (any
    /// SQLite lock), as `F_GETLK` reports it, or `nil` when none does.
    static func holder(_ descriptor: Int32) -> Holder? {
        var lock = wholeFile(F_WRLCK)
        guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid > 0 ? .process(lock.l_pid) : .unknown
    }

    private static func wholeFile(_ type: Int32) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        return lock
    }

    /// The refusal: which process, what it is, and what to do; nothing was set aside.
    static func inUse(_ path: String, _ holder: Holder) -> StorageError {
        let who: String
        switch holder {
        case .process(let pid):
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            who = "process \(pid)" + (name.map { $0.isEmpty ? "" : " (\($0))" } ?? "")
        case .unknown:
            who = "another process"
        }
        let stop = if case .process(let pid) = holder { " or stop it (kill \(pid))" } else { "" }
        return StorageError(file: path, action: "check", reason: "it is in use by \(who), which holds SQLite's lock on it and may be writing it; it was neither checked nor set aside. Close that program (an sqlite3 shell, an older launchservicesd)\(stop), then start launchservicesd again")
    }
}
