import Foundation
import GRDB
import LaunchServicesCore

/// Persistent pasteboards on disk (SQLite through GRDB, WAL, `pasteboard.sqlite` next to the
/// registry). Only pasteboards copied with `persistent` are kept; each change is one
/// transaction, written before the daemon answers, so an acknowledged copy survives SIGKILL.
public final class PasteboardStore: Sendable {
    let pool: DatabasePool

    public init(folder: String) throws {
        pool = try StateDatabase.open(folder: folder, file: "pasteboard.sqlite") { migrator in
            migrator.registerMigration("v1") { db in
                try db.create(table: "pasteboard") { t in
                    t.primaryKey("name", .text)
                    t.column("changeCount", .integer).notNull()
                    t.column("expiresAt", .integer)
                    t.column("password", .text)
                }
                try db.create(table: "pasteboardItem") { t in
                    t.column("name", .text).notNull().references("pasteboard", onDelete: .cascade)
                    t.column("position", .integer).notNull()
                    t.column("type", .text).notNull()
                    t.column("data", .blob).notNull()
                    t.primaryKey(["name", "position"])
                }
            }
        }
    }

    /// Every saved pasteboard, with its items in order.
    public func load() throws -> [Pasteboard] {
        try pool.read { db in
            var boards: [String: Pasteboard] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, changeCount, expiresAt, password FROM pasteboard") {
                let name: String = row["name"]
                let expiresAt: Int64? = row["expiresAt"]
                boards[name] = Pasteboard(name: name, changeCount: UInt64(max(0, row["changeCount"] as Int64)),
                                          expiresAt: expiresAt.map { UInt64(max(0, $0)) }, persistent: true, password: row["password"])
            }
            for row in try Row.fetchAll(db, sql: "SELECT name, type, data FROM pasteboardItem ORDER BY name, position") {
                let data: Data = row["data"]
                boards[row["name"]]?.items.append(PasteboardItem(type: row["type"], data: [UInt8](data)))
            }
            return boards.values.sorted { $0.name < $1.name }
        }
    }

    /// Saves a persistent pasteboard that holds items, or forgets one that no longer should
    /// be kept (cleared, expired, or replaced by a non-persistent copy).
    public func record(_ board: Pasteboard) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM pasteboard WHERE name = ?", arguments: [board.name])
            guard board.persistent, !board.items.isEmpty else { return }
            try db.execute(sql: "INSERT INTO pasteboard (name, changeCount, expiresAt, password) VALUES (?, ?, ?, ?)",
                           arguments: [board.name, Int64(clamping: board.changeCount), board.expiresAt.map { Int64(clamping: $0) }, board.password])
            for (position, item) in board.items.enumerated() {
                try db.execute(sql: "INSERT INTO pasteboardItem (name, position, type, data) VALUES (?, ?, ?, ?)",
                               arguments: [board.name, position, item.type, Data(item.data)])
            }
        }
    }
}
