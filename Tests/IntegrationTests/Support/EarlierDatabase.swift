import Foundation
import GRDB

/// State databases as an earlier version wrote them, for the migration tests.
enum EarlierDatabase {
    /// Replaces the database at `file` (and its WAL files) with a new one: `schema` run as
    /// SQL (the old tables and their `grdb_migrations` records), then `fill` for rows that
    /// need arguments. Run it while the daemon is stopped.
    static func write(_ file: String, schema: String, fill: (Database) throws -> Void = { _ in }) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        let old = try DatabasePool(path: file)
        try old.write { db in
            try db.execute(sql: schema)
            try fill(db)
        }
        try old.close()
    }
}
