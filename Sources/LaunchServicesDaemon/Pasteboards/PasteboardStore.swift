import Foundation
import GRDB
import LaunchServicesCore

/// Persistent pasteboards on disk (SQLite through GRDB, `StateDatabase`, `pasteboard.sqlite`
/// next to the registry). Only pasteboards copied with `persistent` are kept; each change is
/// one transaction, written before the daemon answers, so an acknowledged copy survives
/// SIGKILL. Passwords are kept only as verifiers (`PasswordHasher`); deleted content is
/// zeroed, and a protected pasteboard's deletion is checkpointed out of the log too.
public final class PasteboardStore: Sendable {
    let database: StateDatabase
    /// What this open found damaged and set aside (a new file was started), if anything.
    var damage: DamagedDatabase? { database.damage }
    var file: String { database.path }

    /// `hasher` turns the plain-text passwords earlier versions saved into verifiers, once.
    init(folder: String, hasher: some PasswordHasher = Argon2idHasher()) throws {
        database = try StateDatabase(folder: folder, file: "pasteboard.sqlite", secureDelete: true, describe: Self.describeLoss,
                                     rebuildIf: Self.holdsPlainPasswords) { migrator in
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
            // Up to v1 the password column held the password itself. Each is hashed here (tens of
            // ms each, at most pasteboard.maximumPasteboards of them, once) and the column
            // renamed, so a value in it is never mistaken for the other kind.
            migrator.registerMigration(Self.verifiersMigration) { db in
                try db.alter(table: "pasteboard") { t in t.rename(column: "password", to: "passwordVerifier") }
                for row in try Row.fetchAll(db, sql: "SELECT name, passwordVerifier FROM pasteboard WHERE passwordVerifier IS NOT NULL") {
                    let name: String = row["name"]
                    let password: String = row["passwordVerifier"]
                    // An empty password protected nothing (a copy never set one).
                    let verifier = password.isEmpty ? nil : hasher.verifier(for: password)
                    guard password.isEmpty || verifier != nil else { throw PasteboardStoreError.cannotHash(name) }
                    try db.execute(sql: "UPDATE pasteboard SET passwordVerifier = ? WHERE name = ?", arguments: [verifier, name])
                }
            }
        }
    }

    static let verifiersMigration = "v2 password verifiers"

    /// Whether an existing file still holds passwords in plain text (saved before
    /// `verifiersMigration`), which the migration replaces: then the file is rebuilt, so
    /// they do not linger in free pages or in the log.
    static func holdsPlainPasswords(_ db: Database, applied: Set<String>) throws -> Bool {
        guard !applied.contains(verifiersMigration), try db.columns(in: "pasteboard").contains(where: { $0.name == "password" }) else { return false }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pasteboard WHERE password IS NOT NULL AND password != ''") ?? 0 > 0
    }

    /// What a damaged file held, as far as it can be read: what a new one does not have.
    static func describeLoss(_ damaged: DatabaseCheck.Connection) -> String {
        guard let boards = damaged.count("SELECT COUNT(*) FROM pasteboard") else {
            return "the persistent pasteboards: how many could not be read"
        }
        return "\(boards) persistent \(boards == 1 ? "pasteboard" : "pasteboards")"
    }

    /// Every saved pasteboard, with its items in order.
    public func load() throws -> [Pasteboard] {
        try database.read { db in
            var boards: [String: Pasteboard] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, changeCount, expiresAt, passwordVerifier FROM pasteboard") {
                let name: String = row["name"]
                let expiresAt: Int64? = row["expiresAt"]
                boards[name] = Pasteboard(name: name, changeCount: UInt64(max(0, row["changeCount"] as Int64)),
                                          expiresAt: expiresAt.map { UInt64(max(0, $0)) }, persistent: true, passwordVerifier: row["passwordVerifier"])
            }
            for row in try Row.fetchAll(db, sql: "SELECT name, type, data FROM pasteboardItem ORDER BY name, position") {
                let data: Data = row["data"]
                boards[row["name"]]?.items.append(PasteboardItem(type: row["type"], data: [UInt8](data)))
            }
            return boards.values.sorted { $0.name < $1.name }
        }
    }

    /// Saves a persistent pasteboard that holds items, or forgets one that no longer should
    /// be kept (cleared, expired, or replaced by a non-persistent copy). When that replaced
    /// or forgot a password-protected pasteboard, the log is checkpointed and emptied, so
    /// none of its bytes stay in the files; if that checkpoint fails, the change is saved
    /// all the same and the failure is returned, for the log.
    @discardableResult
    public func record(_ board: Pasteboard) throws -> StorageError? {
        let erasedProtected = try database.write { db in
            let protected = try Bool.fetchOne(db, sql: "SELECT passwordVerifier IS NOT NULL FROM pasteboard WHERE name = ?", arguments: [board.name]) ?? false
            try db.execute(sql: "DELETE FROM pasteboard WHERE name = ?", arguments: [board.name])
            guard board.persistent, !board.items.isEmpty else { return protected }
            try db.execute(sql: "INSERT INTO pasteboard (name, changeCount, expiresAt, passwordVerifier) VALUES (?, ?, ?, ?)",
                           arguments: [board.name, Int64(clamping: board.changeCount), board.expiresAt.map { Int64(clamping: $0) }, board.passwordVerifier])
            for (position, item) in board.items.enumerated() {
                try db.execute(sql: "INSERT INTO pasteboardItem (name, position, type, data) VALUES (?, ?, ?, ?)",
                               arguments: [board.name, position, item.type, Data(item.data)])
            }
            return protected
        }
        guard erasedProtected else { return nil }
        do {
            try database.checkpoint()
            return nil
        } catch let error as StorageError {
            return error
        }
    }

    /// Closes the file (see `StateDatabase.close`); later saves fail, named.
    func close() throws { try database.close() }
}

enum PasteboardStoreError: Error, CustomStringConvertible {
    case cannotHash(String)
    var description: String {
        switch self {
        case .cannotHash(let name): "the saved password of pasteboard '\(name)' could not be hashed (out of memory?); nothing was changed"
        }
    }
}
