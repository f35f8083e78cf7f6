import Foundation
import GRDB
import NIOConcurrencyHelpers

/// One of the daemon's SQLite files (the registry, the pasteboards), in the owner-only state
/// folder: checked before it is opened for writing, with other processes kept out
/// (`DatabaseFileLock`, `DatabaseCheck`; a damaged file is set aside, `DamagedDatabase`), then opened through one GRDB `DatabaseQueue` connection in
/// WAL mode with `locking_mode=EXCLUSIVE` and `mmap_size=0`, and migrated.
///
/// Why one exclusive connection: with shared locking, SQLite maps the write-ahead log's
/// index (`-shm`) into memory, and a `-shm` that cannot be written (made immutable, or on a
/// full or failing file system) kills the daemon with SIGBUS on the next write. Exclusive,
/// SQLite keeps that index in heap memory and never creates or maps `-shm`, and no other
/// process can read or write the file while the daemon has it. Every write already runs
/// on one queue, so a pool of readers bought nothing. Every failure is a `StorageError`
/// naming the file.
final class StateDatabase: Sendable {
    let path: String
    let queue: DatabaseQueue
    /// What this open found damaged and set aside, if anything.
    let damage: DamagedDatabase?
    /// Whether a clean stop's record stands for the check at this open (`CleanClose`);
    /// `close` writes the record again.
    let trustsCleanClose: Bool
    /// The check was skipped at this open: the file is as a clean stop left it.
    let checkSkipped: Bool
    /// Cleared when a read failed on this file: the next start checks it, however it stops.
    private let recordsAtClose = NIOLockedValueBox(true)

    /// Opens (creating it if needed) `folder/file`. `describe` says what a damaged file held
    /// (see `DatabaseCheck.inspect`). `secureDelete` overwrites deleted content with zeros
    /// (SQLite's `secure_delete`), for files that hold secrets. `rebuildIf`, asked before
    /// migrating an existing file, says whether the migrations will replace secrets; if so the
    /// file is rebuilt (`VACUUM`) and its log emptied afterwards, so nothing an earlier version
    /// left in free pages or in the log survives. A file created now is never rebuilt, so a
    /// first start needs no more room than the new file itself.
    init(folder: String, file: String, secureDelete: Bool = false, trustCleanClose: Bool = false, describe: (DatabaseCheck.Connection) -> String,
         rebuildIf: ((Database, _ applied: Set<String>) throws -> Bool)? = nil,
         migrations: (inout DatabaseMigrator) -> Void) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = folder + "/" + file
        self.path = path
        // No other process may read or write the file while it is checked and, if damaged,
        // set aside; one that holds it is named instead, and nothing is done.
        let hold = try DatabaseFileLock.take(path)
        trustsCleanClose = trustCleanClose
        checkSkipped = trustCleanClose && CleanClose.matches(path)
        // Gone before anything can write the file: a crash from here on leaves no record.
        CleanClose.forget(path)
        if checkSkipped {
            damage = nil
        } else {
            switch try DatabaseCheck.inspect(path, describe: describe) {
            case .absent, .sound:
                damage = nil
            case .damaged(let reason, let lost):
                damage = try DamagedDatabase.setAside(path, reason: reason, lost: lost)
            }
        }
        hold?.release()
        var configuration = Configuration()
        configuration.label = file
        // The check's lock (an open file description lock) can outlive its release for a
        // moment: a process forked meanwhile by another thread shares the description until it
        // execs. Exclusive mode then meets that lock once, at the first read; waiting a second
        // for it turns a spurious "database is locked" (seen in the full test suite, where
        // tests fork in parallel) into a short wait. A real holder is still named: the check
        // above refuses a file another process has open before this is reached.
        configuration.busyMode = .timeout(1)
        configuration.prepareDatabase { db in
            // Before the first read of the file: only then does exclusive mode keep the
            // log's index in heap memory (SQLite's "WAL without shared memory").
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            try db.execute(sql: "PRAGMA mmap_size = 0")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            // As GRDB's pools did: a commit reaches the log before the answer (it survives
            // SIGKILL); only the log's sync to disk waits for the checkpoint.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if secureDelete { try db.execute(sql: "PRAGMA secure_delete = ON") }
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StorageError(file: path, action: "open", error)
        }
        var migrator = DatabaseMigrator()
        migrations(&migrator)
        let rebuild: Bool
        do {
            rebuild = try queue.read { db in
                let applied = try migrator.appliedIdentifiers(db)
                return try !applied.isEmpty && rebuildIf?(db, applied) == true
            }
            try migrator.migrate(queue)
        } catch {
            throw StorageError(file: path, action: "migrate", error)
        }
        if rebuild {
            do {
                try queue.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM")
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
            } catch {
                throw StorageError(file: path, action: "rebuild (after replacing the secrets it held)", error)
            }
        }
    }

    /// Runs `body` in one transaction; any SQLite failure becomes a `StorageError` naming
    /// this file and what failed (e.g. a write, for a file made unwritable).
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.writeWithoutTransaction { db in
            do {
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw StorageError(file: path, action: "write", reason: "the transaction was not committed") }
                return result
            } catch let error as DatabaseError {
                // Not `sqlite3_system_errno`: once GRDB has rolled back it no longer tells
                // the failed call's errno (it read 0 for a write refused with EPERM).
                throw StorageError(file: path, action: "write", error)
            }
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch let error as DatabaseError {
            throw StorageError(file: path, action: "read", error)
        }
    }

    /// Copies the log into the file and empties the log (`wal_checkpoint(TRUNCATE)`), so what
    /// was just deleted (zeroed in the file by `secure_delete`) no longer sits in the log's
    /// older frames. With one exclusive connection no reader can hold the log back.
    func checkpoint() throws {
        let busy: Int?
        do {
            busy = try queue.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch {
            throw StorageError(file: path, action: "checkpoint", error)
        }
        guard busy == 0 else { throw StorageError(file: path, action: "checkpoint", reason: "SQLite could not finish it") }
    }

    /// Closes the connection: SQLite copies the log into the file and removes it, so a
    /// stopped daemon leaves one file. Later writes fail (named).
    func close() throws {
        try queue.close()
        if trustsCleanClose && recordsAtClose.withLockedValue({ $0 }) { CleanClose.record(path) }
    }

    /// The next start checks the file, even after a clean stop (a read of it failed).
    func distrustCleanClose() {
        recordsAtClose.withLockedValue { $0 = false }
    }
}
