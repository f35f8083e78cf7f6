import GRDB
import LaunchServicesCore

/// The claim index (migration v7): one `claim` row per app and scheme it claims, keyed in the
/// rule's own order (scheme, registration time, bundle id: `Registry`), and the two counts
/// `lsctl status` shows, kept exact by triggers. With them the daemon answers its first
/// status query, and a scheme's claims, without reading every app: the start no longer grows
/// with the registry (`RegistryService.read` then runs after the socket serves).
///
/// The rows are written in the same transaction as the `app` row they mirror (`insert`,
/// `delete`, `replaceFolderApps`), so the index never disagrees with the apps it indexes.
extension RegistryStore {
    /// How many apps are registered and how many distinct schemes they claim, as saved.
    public struct Counts: Sendable, Equatable {
        public var apps: Int
        public var schemes: Int

        public init(apps: Int, schemes: Int) {
            self.apps = apps
            self.schemes = schemes
        }
    }

    /// v7: the claim table, its index by app (for withdrawals), the counts and their
    /// triggers; indexes of the apps by time (the latest, at start) and by source (the folder
    /// apps, read before the first answer, without a pass over the apps registered by hand).
    /// Filled once from `app.schemes`, dropping schemes no longer valid, as `load` does;
    /// O(apps), at the first start after the upgrade only.
    static func migrateV7(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE claim (scheme TEXT NOT NULL, registeredAt INTEGER NOT NULL, appID TEXT NOT NULL,
                                PRIMARY KEY (scheme, registeredAt, appID)) WITHOUT ROWID;
            CREATE INDEX claimByApp ON claim(appID);
            CREATE INDEX appByTime ON app(registeredAt);
            CREATE INDEX appBySource ON app(source);
            CREATE TABLE registryCount (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT id, schemes, registeredAt FROM app")
        while let row = try rows.next() {
            try insertClaims(id: row[0], schemes: schemes(row[1]), registeredAt: row[2], db)
        }
        // Counted once here; from now on the triggers keep them. An app row is counted as it
        // is inserted or deleted (an upsert that changes a row counts nothing, see `insert`);
        // a scheme when its first claim arrives and when its last one leaves. Each trigger is
        // a probe of the primary key.
        try db.execute(sql: """
            INSERT INTO registryCount (name, value) VALUES ('apps', (SELECT COUNT(*) FROM app));
            INSERT INTO registryCount (name, value) VALUES ('schemes', (SELECT COUNT(DISTINCT scheme) FROM claim));
            CREATE TRIGGER appCounted AFTER INSERT ON app BEGIN
                UPDATE registryCount SET value = value + 1 WHERE name = 'apps'; END;
            CREATE TRIGGER appUncounted AFTER DELETE ON app BEGIN
                UPDATE registryCount SET value = value - 1 WHERE name = 'apps'; END;
            CREATE TRIGGER schemeCounted BEFORE INSERT ON claim WHEN NOT EXISTS (SELECT 1 FROM claim WHERE scheme = NEW.scheme) BEGIN
                UPDATE registryCount SET value = value + 1 WHERE name = 'schemes'; END;
            CREATE TRIGGER schemeUncounted AFTER DELETE ON claim WHEN NOT EXISTS (SELECT 1 FROM claim WHERE scheme = OLD.scheme) BEGIN
                UPDATE registryCount SET value = value - 1 WHERE name = 'schemes'; END;
            """)
    }

    /// The claim rows of one app (a scheme it declares twice is one claim).
    static func insertClaims(id: String, schemes: [URLScheme], registeredAt: Int64, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "INSERT OR IGNORE INTO claim (scheme, registeredAt, appID) VALUES (?, ?, ?)")
        for scheme in schemes {
            try statement.execute(arguments: [scheme.normalized, registeredAt, id])
        }
    }

    /// How many apps and schemes are saved: two rows, whatever the registry's size.
    public func counts() throws -> Counts {
        try database.read { db in
            var counts = Counts(apps: 0, schemes: 0)
            for row in try Row.fetchAll(db, sql: "SELECT name, value FROM registryCount") {
                switch row[0] as String {
                case "apps": counts.apps = row[1]
                case "schemes": counts.schemes = row[1]
                default: break
                }
            }
            return counts
        }
    }

    /// The claims on `scheme` in the rule's order (earliest registration first, ties by
    /// bundle id), as `Registry.claims(on:)` gives them: a range of the primary key. Bundle ids
    /// are ASCII (`AppBundle.isValidIdentifier`), so SQLite's byte order is Swift's.
    public func claims(on scheme: URLScheme) throws -> [Registry.Claim] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT appID, registeredAt FROM claim WHERE scheme = ? ORDER BY registeredAt, appID",
                             arguments: [scheme.normalized]).map { Registry.Claim(app: $0[0], since: $0[1]) }
        }
    }

    /// Rebuilds the claim index and the counts from the app rows, in one transaction: for a
    /// file an earlier version wrote to after v7 ran (it keeps neither), which the daemon
    /// notices when the counts disagree with the apps it loaded.
    public func rebuildClaimIndex() throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM claim")
            let rows = try Row.fetchCursor(db, sql: "SELECT id, schemes, registeredAt FROM app")
            while let row = try rows.next() {
                try Self.insertClaims(id: row[0], schemes: Self.schemes(row[1]), registeredAt: row[2], db)
            }
            try db.execute(sql: """
                UPDATE registryCount SET value = (SELECT COUNT(*) FROM app) WHERE name = 'apps';
                UPDATE registryCount SET value = (SELECT COUNT(DISTINCT scheme) FROM claim) WHERE name = 'schemes';
                """)
        }
    }

    /// Lets SQLite give back its page cache (`PRAGMA shrink_memory`): after the load, which
    /// read every page, the cache would otherwise keep up to its 2 MB for the daemon's life.
    public func releaseCachedPages() {
        try? database.queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA shrink_memory") }
    }

    /// The latest registration time saved (0 with none): one step down `appByTime`.
    public func latestRegistration() throws -> Int64 {
        try database.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(registeredAt) FROM app") ?? 0 }
    }

    /// Where `id` was registered from by hand (`lsctl register`), if it was: a primary-key probe.
    public func manualPath(of id: String) throws -> String? {
        try database.read { db in try String.fetchOne(db, sql: "SELECT path FROM app WHERE id = ? AND source != 'folder'", arguments: [id]) }
    }
}
