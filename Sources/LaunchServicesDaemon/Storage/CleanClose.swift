#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What a clean stop leaves beside a state database (`NAME.sqlite.closed`): the file's
/// identity and last change as `stat` gives them (device, inode, size, modification and
/// status-change times in nanoseconds), written once SQLite has closed it (its log copied in
/// and removed). At the next start a file that still has exactly that identity and no log
/// is the file this daemon checked at its own start and then changed only through complete
/// transactions, so `PRAGMA quick_check`, which reads every page (most of a large registry's
/// start), is skipped for it. Anything else that wrote to the file meanwhile changed its
/// status-change time, which no process can set back; a crash leaves no record (it is
/// removed before the file is opened for writing), so the next start checks.
///
/// What the record cannot see is damage that no write made (the disk's own): SQLite then
/// reports it when a page is read, and the start reads again with the check
/// (`RegistryService.start`).
enum CleanClose {
    static func recordPath(_ path: String) -> String { path + ".closed" }

    /// The file's identity now, or nil when it cannot be read.
    static func identity(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_dev) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
    }

    /// Whether `path` is as a clean stop left it: a record that names it as it is now, and no log.
    static func matches(_ path: String) -> Bool {
        guard DatabaseCheck.size(of: path + "-wal") < 0, let now = identity(path),
              let recorded = try? String(contentsOfFile: recordPath(path), encoding: .utf8) else { return false }
        return recorded == now
    }

    /// Writes the record for `path` as it is now (after a clean close); a failure leaves the
    /// next start checking, which is always safe.
    static func record(_ path: String) {
        guard DatabaseCheck.size(of: path + "-wal") < 0, let now = identity(path) else { return }
        try? now.write(toFile: recordPath(path), atomically: true, encoding: .utf8)
    }

    /// Removes the record: from now on only a clean stop writes it again.
    static func forget(_ path: String) {
        unlink(recordPath(path))
    }
}
