#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LaunchServicesProtocol

/// A state database found damaged at start and set aside: renamed, never copied or opened
/// for writing, so its bytes are exactly what was found, and its `-wal`/`-shm` renamed with
/// it under SQLite's own naming (`KEPT-wal`), so `sqlite3 KEPT` reads it whole. When the
/// file itself was missing and only its log was there, the log is what is kept. The daemon
/// starts on a new file; this says what happened and what the new file does not have.
struct DamagedDatabase: Sendable, CustomStringConvertible {
    /// Where it was, e.g. `STATE/registry.sqlite`.
    var file: String
    /// The kept file: `STATE/registry.sqlite.damaged-20261125T102533Z`, or that name's `-wal`
    /// when only the log was there.
    var keptAs: String
    /// Whether the database file itself was kept (not only its log).
    var keptFile: Bool
    /// The companions moved with it (`-wal`, `-shm`), besides `keptAs`.
    var companions: [String]
    var reason: String
    var lost: String
    /// When it was set aside (milliseconds since the Unix epoch).
    var time: Int64

    var description: String {
        let name = (file as NSString).lastPathComponent
        let folder = (file as NSString).deletingLastPathComponent
        let with = companions.isEmpty ? "" : " (with its \(companions.joined(separator: " and ")))"
        guard keptFile else {
            // A log alone: SQLite reads it only beside the file it belongs to, so `.recover` has nothing to read.
            return "\(name) in \(folder) is missing but its write-ahead log was there; the log was set aside unchanged as \(keptAs)\(with) and a new \(name) was started. Lost with the file: \(lost). A write-ahead log cannot be read without the file it belongs to: keep it only if you can put that file back (the README's \"Damaged databases\"), else remove it"
        }
        return "\(name) in \(folder) is damaged (\(reason)); it was set aside unchanged as \(keptAs)\(with) and a new one was started. Lost with it: \(lost). Read what is left of it with: sqlite3 \(keptAs) .recover; the README's \"Damaged databases\" says how to restore it"
    }

    var report: DamagedDatabaseReport {
        DamagedDatabaseReport(file: file, keptAs: keptAs, reason: reason, lost: lost, time: ClaimTime.iso8601(time))
    }

    /// Renames `path` and its `-wal`/`-shm` aside as `path.damaged-TIMESTAMP` (`ClaimTime.basic`; `-2`, `-3` …
    /// when that name is taken). If a companion cannot be moved, the file is put back and this
    /// throws: a new database beside an old log could take that log's pages for its own.
    static func setAside(_ path: String, reason: String, lost: String) throws -> DamagedDatabase {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        var kept = path + ".damaged-" + ClaimTime.basic(now)
        var attempt = 1
        while ["", "-wal", "-shm"].contains(where: { FileManager.default.fileExists(atPath: kept + $0) }) {
            attempt += 1
            kept = path + ".damaged-" + ClaimTime.basic(now) + "-\(attempt)"
        }
        var moved: [String] = []
        for suffix in ["", "-wal", "-shm"] where DatabaseCheck.size(of: path + suffix) >= 0 {
            guard rename(path + suffix, kept + suffix) == 0 else {
                let failure = String(cString: strerror(errno))
                for done in moved { _ = rename(kept + done, path + done) }
                throw StorageError(file: path, action: "set aside", reason: "it is damaged (\(reason)), and renaming \(path + suffix) to \(kept + suffix) failed: \(failure); nothing was changed")
            }
            moved.append(suffix)
        }
        // Named by the file if it was there, else by its log (the file missing beside it).
        let named = moved.first ?? ""
        return DamagedDatabase(file: path, keptAs: kept + named, keptFile: named.isEmpty, companions: moved.filter { $0 != named },
                               reason: reason, lost: lost, time: now)
    }
}
