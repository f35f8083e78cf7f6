import Foundation
import GRDB
import LaunchServicesCore

/// The registry on disk (SQLite through GRDB, `StateDatabase`): every registered app and
/// every user default, so both survive a clean restart and a SIGKILL. Each change is one
/// transaction; each failure a `StorageError` naming the file.
///
/// An app's validated fields are stored, not just its path, so a registration does not
/// depend on its Info.plist still being readable at the next start.
public final class RegistryStore: Sendable {
    /// Where a registration came from: an apps folder (withdrawn when the bundle leaves the
    /// folder) or `lsctl register` (kept until `lsctl unregister`).
    public enum Source: String, Sendable {
        case folder
        case manual
    }

    public struct Stored: Sendable {
        public var app: AppBundle
        public var source: Source
        /// When the app was registered (milliseconds since the Unix epoch), which decides
        /// between claimants of a scheme (`Registry`).
        public var registeredAt: Int64
    }

    /// An app and the time it was registered, as saved.
    public typealias Registration = (app: AppBundle, registeredAt: Int64)

    let database: StateDatabase
    /// What this open found damaged and set aside (a new file was started), if anything.
    var damage: DamagedDatabase? { database.damage }
    var file: String { database.path }

    /// The check was skipped at this open: the file is as a clean stop left it (`CleanClose`).
    var checkSkipped: Bool { database.checkSkipped }
    /// The next start checks the file, even after a clean stop.
    func distrustCleanClose() { database.distrustCleanClose() }

    /// Where the registry of state folder `folder` is.
    static func path(in folder: String) -> String { folder + "/registry.sqlite" }

    /// Opens (creating if needed) `folder/registry.sqlite`; a damaged one is set aside first.
    /// `trustCleanClose`: a file a clean stop left unchanged is not checked again (`CleanClose`).
    public init(folder: String, trustCleanClose: Bool = true) throws {
        database = try StateDatabase(folder: folder, file: "registry.sqlite", trustCleanClose: trustCleanClose, describe: Self.describeLoss) { migrator in
            migrator.registerMigration("v1") { db in
                try db.create(table: "app") { t in
                    t.primaryKey("id", .text)
                    t.column("name", .text).notNull()
                    t.column("path", .text).notNull()
                    t.column("executable", .text).notNull()
                    t.column("schemes", .text).notNull()
                    t.column("queriesSchemes", .text).notNull()
                    t.column("source", .text).notNull()
                }
                try db.create(table: "schemeDefault") { t in
                    t.primaryKey("scheme", .text)
                    t.column("bundleID", .text).notNull()
                }
            }
            // v2: when each app was registered, so the first to claim a scheme keeps it.
            // Apps registered before share one time, the migration's: between them the
            // smallest bundle id still wins, as it did, so no scheme changes hands.
            migrator.registerMigration("v2") { db in
                try db.alter(table: "app") { t in
                    t.add(column: "registeredAt", .integer).notNull().defaults(to: 0)
                }
                try db.execute(sql: "UPDATE app SET registeredAt = ?", arguments: [Self.millisecondsNow()])
            }
            // v3: each URL type's CFBundleURLName with its schemes (`URLTypesColumn`). Apps
            // saved before get '' (no URL types known): their schemes, times and source stay;
            // the names come with the next registration or scan of the bundle.
            migrator.registerMigration("v3") { db in
                try db.alter(table: "app") { t in
                    t.add(column: "urlTypes", .text).notNull().defaults(to: "")
                }
            }
            // v4: paths saved before they were made canonical (symbolic links, `..`) become
            // canonical, so the same bundle found in a folder is not taken for another. Once,
            // here, rather than one realpath per app at every start.
            migrator.registerMigration("v4") { db in
                let rows = try Row.fetchAll(db, sql: "SELECT id, path FROM app")
                for row in rows {
                    let path: String = row[1]
                    guard let canonical = BundlePath.resolve(path), canonical != path else { continue }
                    try db.execute(sql: "UPDATE app SET path = ? WHERE id = ?", arguments: [canonical, row[0] as String])
                }
            }
            // v5: URL types move from v3's JSON column to rows of their own, read with the
            // apps in one pass: one JSON decoding per app was most of a 10,000-app start.
            migrator.registerMigration("v5") { db in
                try db.create(table: "urlType") { t in
                    t.column("appID", .text).notNull()
                    t.column("position", .integer).notNull()
                    t.column("name", .text)
                    t.column("schemes", .text).notNull()
                    t.primaryKey(["appID", "position"])
                }
                for row in try Row.fetchAll(db, sql: "SELECT id, urlTypes FROM app WHERE urlTypes != ''") {
                    try Self.insertURLTypes(URLTypesColumn.decode(row[1]), of: row[0], db)
                }
                try db.alter(table: "app") { t in t.drop(column: "urlTypes") }
            }
            // v6: when the daemon first saw a desktop entry handle each scheme: the desktop
            // side's claim, which keeps its place against native apps registered later
            // (`SchemeResolution`).
            migrator.registerMigration("v6") { db in
                try db.create(table: "desktopClaim") { t in
                    t.primaryKey("scheme", .text)
                    t.column("since", .integer).notNull()
                }
            }
            // v7: the claim index and the counts (RegistryStore+Claims.swift).
            migrator.registerMigration("v7", migrate: Self.migrateV7)
        }
    }

    /// What a damaged registry held, as far as it can be read: what a new one does not have.
    static func describeLoss(_ damaged: DatabaseCheck.Connection) -> String {
        let manual: String
        if let count = damaged.count("SELECT COUNT(*) FROM app WHERE source = 'manual'") {
            let ids = (try? damaged.strings("SELECT id FROM app WHERE source = 'manual' ORDER BY id LIMIT 11")) ?? []
            let named = ids.isEmpty ? "" : ": " + ids.prefix(10).joined(separator: ", ") + (ids.count > 10 ? ", …" : "")
            manual = "\(count) \(count == 1 ? "app" : "apps") registered by hand (lsctl register, or an app's own check-in)\(named)"
        } else {
            manual = "the apps registered by hand (lsctl register, or an app's own check-in): how many could not be read"
        }
        let defaults = damaged.count("SELECT COUNT(*) FROM schemeDefault").map { "\($0) \($0 == 1 ? "default" : "defaults") (lsctl default)" }
            ?? "the defaults (lsctl default): how many could not be read"
        return "\(manual); \(defaults); the apps folders' apps are registered again, with new registration times"
    }

    /// Everything stored: apps and defaults.
    public func load() throws -> (apps: [Stored], defaults: [URLScheme: String]) {
        (try loadApps(), try loadDefaults())
    }

    /// The stored apps, or only those of one source (the start reads the folder apps before
    /// it serves, those registered by hand after).
    public func loadApps(source: Source? = nil) throws -> [Stored] {
        try database.read { db in try Self.readApps(db, where: Self.filter(source)) }
    }

    /// The apps of one source whose ids come after `id` (all from the first when nil), at most
    /// `limit`, in id order: the load after the socket serves, a part at a time, so a scheme's
    /// read-ahead (`preview(of:)`) waits for one part, not for all.
    public func loadApps(source: Source?, after id: String?, limit: Int) throws -> [Stored] {
        let filter = Self.filter(source)
        guard let id else { return try database.read { db in try Self.readApps(db, where: filter, limit: limit) } }
        let after = filter.isEmpty ? "id > ?" : filter + " AND id > ?"
        return try database.read { db in try Self.readApps(db, where: after, arguments: [id], limit: limit) }
    }

    /// The condition that picks one source's rows; an unknown source reads as manual, as in
    /// `readApps`.
    static func filter(_ source: Source?) -> String {
        switch source {
        case nil: ""
        case .folder: "source = 'folder'"
        case .manual: "source != 'folder'"
        }
    }

    /// The app rows matching `condition` (all when empty), in id order, at most `limit`, each
    /// with its URL types.
    static func readApps(_ db: Database, where condition: String, arguments: StatementArguments = [], limit: Int? = nil) throws -> [Stored] {
        let clause = (condition.isEmpty ? "" : " WHERE " + condition) + " ORDER BY id" + (limit.map { " LIMIT \($0)" } ?? "")
        var apps: [Stored] = []
        if let limit {
            apps.reserveCapacity(limit)
        } else {
            apps.reserveCapacity(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM app" + (condition.isEmpty ? "" : " WHERE " + condition), arguments: arguments) ?? 0)
        }
        // Columns by position, rows one at a time: the daemon's start with 10,000 apps
        // is mostly this loop.
        var urlTypes: [String: [AppBundle.URLType]] = [:]
        let types = try Row.fetchCursor(db, sql: "SELECT appID, name, schemes FROM urlType" + (condition.isEmpty && limit == nil ? "" : " WHERE appID IN (SELECT id FROM app\(clause))")
                                            + " ORDER BY appID, position", arguments: arguments)
        while let row = try types.next() {
            let schemes = Self.schemes(row[2])
            if !schemes.isEmpty { urlTypes[row[0], default: []].append(AppBundle.URLType(name: row[1], schemes: schemes)) }
        }
        let rows = try Row.fetchCursor(db, sql: "SELECT id, name, path, executable, schemes, queriesSchemes, source, registeredAt FROM app\(clause)", arguments: arguments)
        while let row = try rows.next() {
            let id: String = row[0]
            let queries = Self.schemes(row[5])
            let schemes = Self.schemes(row[4])
            var types = urlTypes.removeValue(forKey: id) ?? []
            // The usual bundle, one URL type with every scheme: one array for both, not two.
            if types.count == 1 && types[0].schemes == schemes { types[0].schemes = schemes }
            let app = AppBundle(id: id, name: row[1], path: row[2], executable: row[3], schemes: schemes,
                                queriesSchemes: queries.isEmpty ? [] : Set(queries), urlTypes: types)
            apps.append(Stored(app: app, source: Source(rawValue: row[6]) ?? .manual, registeredAt: row[7]))
        }
        return apps
    }

    /// The user's defaults (`lsctl default`).
    public func loadDefaults() throws -> [URLScheme: String] {
        try database.read { db in
            var defaults: [URLScheme: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT scheme, bundleID FROM schemeDefault") {
                if let scheme = try? URLScheme(validating: row["scheme"] as String) { defaults[scheme] = row["bundleID"] }
            }
            return defaults
        }
    }

    /// The schemes of a space-separated column; one no longer valid is dropped.
    static func schemes(_ column: String) -> [URLScheme] {
        let utf8 = column.utf8
        guard !utf8.isEmpty else { return [] }
        // Sized once: the array lives as long as the app is registered, and one grown by
        // appends kept room for up to twice its schemes (a tenth of a large registry).
        var schemes: [URLScheme] = []
        schemes.reserveCapacity(utf8.reduce(1) { $1 == UInt8(ascii: " ") ? $0 + 1 : $0 })
        for part in utf8.split(separator: UInt8(ascii: " ")) {
            if let scheme = try? URLScheme(validating: String(decoding: part, as: UTF8.self)) { schemes.append(scheme) }
        }
        return schemes
    }

    /// Saves an app registered at `registeredAt` (milliseconds since the Unix epoch; now
    /// when not given).
    public func save(_ app: AppBundle, source: Source, registeredAt: Int64 = RegistryStore.millisecondsNow()) throws {
        try database.write { db in try Self.insert(app, source: source, registeredAt: registeredAt, db) }
    }

    /// Saves several apps in one transaction (a bulk import; the bench's large registries).
    public func save(_ apps: [Registration], source: Source) throws {
        try database.write { db in
            for (app, registeredAt) in apps { try Self.insert(app, source: source, registeredAt: registeredAt, db) }
        }
    }

    static func insert(_ app: AppBundle, source: Source, registeredAt: Int64, _ db: Database) throws {
        // An upsert, not INSERT OR REPLACE: a replacement would delete the old row without
        // firing the delete trigger, and the app would be counted twice (registryCount).
        try db.execute(sql: """
            INSERT INTO app (id, name, path, executable, schemes, queriesSchemes, source, registeredAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET name = excluded.name, path = excluded.path, executable = excluded.executable, schemes = excluded.schemes,
                queriesSchemes = excluded.queriesSchemes, source = excluded.source, registeredAt = excluded.registeredAt
            """, arguments: [app.id, app.name, app.path, app.executable,
                             app.schemes.map(\.normalized).joined(separator: " "),
                             app.queriesSchemes.map(\.normalized).sorted().joined(separator: " "), source.rawValue, registeredAt])
        try db.execute(sql: "DELETE FROM urlType WHERE appID = ?", arguments: [app.id])
        try insertURLTypes(app.urlTypes, of: app.id, db)
        try db.execute(sql: "DELETE FROM claim WHERE appID = ?", arguments: [app.id])
        try insertClaims(id: app.id, schemes: app.schemes, registeredAt: registeredAt, db)
    }

    /// An app's URL types, in declaration order; schemes space-separated like `app.schemes`.
    static func insertURLTypes(_ types: [AppBundle.URLType], of id: String, _ db: Database) throws {
        for (position, type) in types.enumerated() {
            try db.execute(sql: "INSERT INTO urlType (appID, position, name, schemes) VALUES (?, ?, ?, ?)",
                           arguments: [id, position, type.name, type.schemes.map(\.normalized).joined(separator: " ")])
        }
    }

    /// Replaces the set of folder registrations in one transaction.
    public func replaceFolderApps(_ apps: [Registration]) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM urlType WHERE appID IN (SELECT id FROM app WHERE source = 'folder')")
            try db.execute(sql: "DELETE FROM claim WHERE appID IN (SELECT id FROM app WHERE source = 'folder')")
            try db.execute(sql: "DELETE FROM app WHERE source = 'folder'")
            for (app, registeredAt) in apps { try Self.insert(app, source: .folder, registeredAt: registeredAt, db) }
        }
    }

    /// Closes the file (see `StateDatabase.close`); later changes fail, named.
    public func close() throws { try database.close() }

    /// The wall clock in milliseconds since the Unix epoch.
    public static func millisecondsNow() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    public func delete(_ id: String) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM urlType WHERE appID = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM claim WHERE appID = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM app WHERE id = ?", arguments: [id])
        }
    }

    /// When the desktop side first claimed each scheme (milliseconds since the Unix epoch).
    public func desktopClaims() throws -> [URLScheme: Int64] {
        // Read on the start's path (before the first answer): a cursor, not an array of rows,
        // and the dictionary sized once — a user's thousands of claims cost well under a
        // millisecond instead of several.
        try database.read { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM desktopClaim") ?? 0
            var claims: [URLScheme: Int64] = [:]
            claims.reserveCapacity(count)
            let rows = try Row.fetchCursor(db, sql: "SELECT scheme, since FROM desktopClaim")
            while let row = try rows.next() {
                if let scheme = try? URLScheme(validating: row[0] as String) { claims[scheme] = row[1] }
            }
            return claims
        }
    }

    /// Records the desktop side's new claims, keeping the time of a scheme it already claims
    /// (the first sight is the claim), and forgets the schemes no desktop entry handles any
    /// more: a desktop app installed after that is a newcomer.
    public func updateDesktopClaims(seen: [URLScheme: Int64], gone: [URLScheme]) throws {
        guard !seen.isEmpty || !gone.isEmpty else { return }
        try database.write { db in
            for (scheme, since) in seen {
                try db.execute(sql: "INSERT OR IGNORE INTO desktopClaim (scheme, since) VALUES (?, ?)", arguments: [scheme.normalized, since])
            }
            for scheme in gone {
                try db.execute(sql: "DELETE FROM desktopClaim WHERE scheme = ?", arguments: [scheme.normalized])
            }
        }
    }

    public func setDefault(_ id: String?, for scheme: URLScheme) throws {
        try database.write { db in
            if let id {
                try db.execute(sql: "INSERT OR REPLACE INTO schemeDefault (scheme, bundleID) VALUES (?, ?)", arguments: [scheme.normalized, id])
            } else {
                try db.execute(sql: "DELETE FROM schemeDefault WHERE scheme = ?", arguments: [scheme.normalized])
            }
        }
    }
}

/// The `app.urlTypes` column of schema versions v3 and v4, read once by migration v5: a JSON
/// array of `{"name": …, "schemes": […]}` (name left out when the URL type has none). ''
/// (a row saved before v3) or anything unreadable is no URL types; a scheme that no longer
/// validates is dropped, as in the `schemes` column.
enum URLTypesColumn {
    private struct Entry: Codable {
        var name: String?
        var schemes: [String]
    }

    static func decode(_ text: String?) -> [AppBundle.URLType] {
        guard let text, !text.isEmpty, let entries = try? JSONDecoder().decode([Entry].self, from: Data(text.utf8)) else { return [] }
        return entries.compactMap { entry in
            let schemes = entry.schemes.compactMap { try? URLScheme(validating: $0) }
            return schemes.isEmpty ? nil : AppBundle.URLType(name: entry.name, schemes: schemes)
        }
    }
}
