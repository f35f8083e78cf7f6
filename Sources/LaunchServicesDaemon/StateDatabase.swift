import Foundation
import GRDB

/// The daemon's SQLite files (the registry, the pasteboards): one per concept, in the
/// owner-only state folder, WAL mode (GRDB's `DatabasePool`), migrated to the current schema
/// on open.
enum StateDatabase {
    /// `secureDelete` overwrites deleted content with zeros (SQLite's `secure_delete`), for
    /// files that hold secrets: otherwise cleared items and replaced values stay readable in
    /// free pages. When this open applies `secretsRewrittenBy` (a migration that replaced
    /// secrets), the file is rebuilt (`VACUUM`) and the log emptied, so nothing an earlier
    /// version left in free pages or in the log survives.
    static func open(folder: String, file: String, secureDelete: Bool = false, secretsRewrittenBy: String? = nil, migrations: (inout DatabaseMigrator) -> Void) throws -> DatabasePool {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = Configuration()
        if secureDelete {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        }
        let pool = try DatabasePool(path: folder + "/" + file, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrations(&migrator)
        let before = try pool.read { try migrator.appliedIdentifiers($0) }
        try migrator.migrate(pool)
        if let secretsRewrittenBy, !before.contains(secretsRewrittenBy) {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        return pool
    }
}
