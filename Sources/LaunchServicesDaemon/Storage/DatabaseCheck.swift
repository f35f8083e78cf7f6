#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GRDBSQLite

/// The look at a state database before anything opens it for writing. A damaged file is
/// the user's data: opening it read-write could change it (a hot write-ahead log is
/// checkpointed into it, migrations run), so it is first read through a connection that
/// cannot write: read-only, on SQLite's `unix-none` VFS (no file locks, which a read-only
/// descriptor could not take; the caller holds `DatabaseFileLock` meanwhile, which keeps
/// every other process's SQLite out, or names the process that is in), with
/// `locking_mode=EXCLUSIVE` so the write-ahead log's index is built in heap memory and
/// no `-shm` file is created or mapped. `PRAGMA quick_check` then reads every page.
enum DatabaseCheck {
    enum Verdict: Equatable {
        /// No file yet (or an empty one, which SQLite takes as an empty database).
        case absent
        case sound
        /// `reason`: what SQLite found; `lost`: what the file held, as far as it could be read.
        case damaged(reason: String, lost: String)
    }

    /// Checks `path` without writing to it. `describe` says what the file holds (asked only
    /// of a damaged file, through the same read-only connection; it may find little).
    /// A file that cannot be read for another reason than damage (permissions, I/O) throws a
    /// `StorageError`: that file is not set aside. Call it holding `DatabaseFileLock`, so no
    /// other process writes the file while it is read.
    static func inspect(_ path: String, describe: (Connection) -> String) throws -> Verdict {
        let fm = FileManager.default
        guard fm.fileExists(atPath: path) else {
            if size(of: path + "-wal") > 0 {
                // Everything the file held is lost, and its log cannot be read without it.
                return .damaged(reason: "the file is missing but its write-ahead log (-wal) is there", lost: describe(Connection(handle: nil)))
            }
            return .absent
        }
        let companions = ["-wal", "-shm"].filter { fm.fileExists(atPath: path + $0) }
        defer {
            // A damaged file can make even a read-only connection leave an empty log behind;
            // it was not the user's, so it does not stay.
            for suffix in ["-wal", "-shm"] where !companions.contains(suffix) && size(of: path + suffix) == 0 {
                try? fm.removeItem(atPath: path + suffix)
            }
        }
        var handle: OpaquePointer?
        let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, "unix-none")
        defer { sqlite3_close_v2(handle) }
        guard opened == SQLITE_OK, let handle else {
            return try verdict(path, Connection(handle: handle), code: opened, describe: describe)
        }
        let connection = Connection(handle: handle)
        do {
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
            try connection.execute("PRAGMA mmap_size = 0")
            let rows = try connection.strings("PRAGMA quick_check(5)")
            if rows == ["ok"] { return .sound }
            return .damaged(reason: "SQLite's quick_check: " + rows.joined(separator: "; "), lost: describe(connection))
        } catch let failure as Connection.Failure {
            return try verdict(path, connection, code: failure.code, describe: describe)
        }
    }

    /// A failed open or check: damage (the file is corrupt or not a database) or another
    /// problem, thrown.
    private static func verdict(_ path: String, _ connection: Connection, code: Int32, describe: (Connection) -> String) throws -> Verdict {
        let message = connection.message ?? String(cString: sqlite3_errstr(code))
        let primary = code & 0xFF
        if primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB {
            return .damaged(reason: "SQLite: \(message), error \(code)", lost: describe(connection))
        }
        throw StorageError(file: path, action: "check", reason: StorageError.reason(code: code, message: message, systemErrno: connection.systemErrno))
    }

    static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    /// A raw SQLite connection, read-only, used only by the check.
    struct Connection {
        struct Failure: Error { var code: Int32 }

        let handle: OpaquePointer?

        var message: String? { handle.map { String(cString: sqlite3_errmsg($0)) } }
        var systemErrno: Int32 { handle.map { sqlite3_system_errno($0) } ?? 0 }

        func execute(_ sql: String) throws {
            _ = try strings(sql)
        }

        /// The first column of every row, as text.
        func strings(_ sql: String) throws -> [String] {
            var statement: OpaquePointer?
            var code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            guard code == SQLITE_OK else { throw Failure(code: sqlite3_extended_errcode(handle)) }
            var rows: [String] = []
            while true {
                code = sqlite3_step(statement)
                if code == SQLITE_DONE { return rows }
                guard code == SQLITE_ROW else { throw Failure(code: sqlite3_extended_errcode(handle)) }
                rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            }
        }

        /// A count from a damaged file: `nil` when that part of it cannot be read.
        func count(_ sql: String) -> Int? {
            (try? strings(sql)).flatMap(\.first).flatMap { Int($0) }
        }
    }
}
