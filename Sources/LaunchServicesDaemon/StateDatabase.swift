import Foundation
import GRDB

/// The daemon's SQLite files (the registry, the pasteboards): one per concept, in the
/// owner-only state folder, WAL mode (GRDB's `DatabasePool`), migrated to the current schema
/// on open.
enum StateDatabase {
    static func open(folder: String, file: String, migrations: (inout DatabaseMigrator) -> Void) throws -> DatabasePool {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let pool = try DatabasePool(path: folder + "/" + file)
        var migrator = DatabaseMigrator()
        migrations(&migrator)
        try migrator.migrate(pool)
        return pool
    }
}
