import Foundation
import GRDB
import LaunchServicesCore
@testable import LaunchServicesDaemon
import Testing

/// The claim index and the counts (migration v7, `RegistryStore+Claims`): after any
/// sequence of writes they hold exactly what recomputing them from the saved apps gives, and
/// v7 run on a file an earlier version wrote gives what registering the same apps gives.
@Suite("Registry store: the claim index and the counts")
struct RegistryStoreIndexTests {
    static let schemes = (0..<8).map { try! URLScheme(validating: "s\($0)") }

    /// What the index must hold, recomputed from `load()` the way the daemon's start does.
    static func recomputed(_ store: RegistryStore) throws -> (claims: [URLScheme: [Registry.Claim]], counts: RegistryStore.Counts) {
        let registry = Registry(loading: try store.load().apps.map { ($0.app, $0.registeredAt) })
        var claims: [URLScheme: [Registry.Claim]] = [:]
        for scheme in registry.claimants.keys { claims[scheme] = registry.claims(on: scheme) }
        return (claims, RegistryStore.Counts(apps: registry.apps.count, schemes: registry.claimants.count))
    }

    /// Every claim row, by scheme, in the index's own order.
    static func indexed(_ store: RegistryStore) throws -> [URLScheme: [Registry.Claim]] {
        let schemes = try store.database.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT scheme FROM claim") }
        var claims: [URLScheme: [Registry.Claim]] = [:]
        for text in schemes { claims[try URLScheme(validating: text)] = try store.claims(on: try URLScheme(validating: text)) }
        return claims
    }

    @Test("after random saves, replacements, deletions and folder replacements, the index equals recomputation", arguments: 0..<12)
    func randomWrites(seed: Int) throws {
        print("RegistryStoreIndexTests.randomWrites seed \(seed)")
        var random = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 3)
        let folder = NSTemporaryDirectory() + "lsindex-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try RegistryStore(folder: folder)
        defer { try? store.close() }
        func app(_ id: String) -> AppBundle {
            let claimed = Self.schemes.filter { _ in random.chance(0.3) }
            return AppBundle(id: id, name: id, path: "/apps/\(id).app", executable: "run", schemes: claimed,
                             urlTypes: claimed.isEmpty ? [] : [AppBundle.URLType(name: nil, schemes: claimed)])
        }
        for step in 0..<60 {
            // Few ids (so saves replace apps) and few times (so claims tie).
            let id = "app.\(Int.random(in: 0..<10, using: &random))"
            let time = Int64.random(in: 1...4, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: try store.save(app(id), source: random.chance(0.5) ? .manual : .folder, registeredAt: time)
            case 5..<7: try store.delete(id)
            case 7: try store.delete("never.registered")
            default:
                let folderApps = (0..<Int.random(in: 0...4, using: &random)).map { n in (app("folder.\(n)"), Int64.random(in: 1...4, using: &random)) }
                try store.replaceFolderApps(folderApps)
            }
            let expected = try Self.recomputed(store)
            #expect(try Self.indexed(store) == expected.claims, "seed \(seed), step \(step)")
            #expect(try store.counts() == expected.counts, "seed \(seed), step \(step)")
        }
    }

    @Test("v7 run on a file v6 wrote (with a scheme no longer valid) equals registering the same apps")
    func migrationFromV6() throws {
        let root = NSTemporaryDirectory() + "lsindex-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/old", withIntermediateDirectories: true)
        let rows: [(id: String, schemes: String, time: Int64, source: String)] = [
            ("b.app", "mail web", 5, "manual"), ("a.app", "mail", 5, "folder"), ("c.app", "web 9bad news", 2, "manual"),
            ("d.app", "", 7, "folder"), ("e.app", "news", 9, "manual"),
        ]
        // Exactly v6's schema and migration record (RegistryStore's migrations v1-v6).
        do {
            let queue = try DatabaseQueue(path: root + "/old/registry.sqlite")
            try queue.write { db in
                try db.execute(sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2'), ('v3'), ('v4'), ('v5'), ('v6');
                    CREATE TABLE "app" ("id" TEXT PRIMARY KEY NOT NULL, "name" TEXT NOT NULL, "path" TEXT NOT NULL, "executable" TEXT NOT NULL,
                        "schemes" TEXT NOT NULL, "queriesSchemes" TEXT NOT NULL, "source" TEXT NOT NULL, "registeredAt" INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE "schemeDefault" ("scheme" TEXT PRIMARY KEY NOT NULL, "bundleID" TEXT NOT NULL);
                    CREATE TABLE "urlType" ("appID" TEXT NOT NULL, "position" INTEGER NOT NULL, "name" TEXT, "schemes" TEXT NOT NULL, PRIMARY KEY ("appID", "position"));
                    CREATE TABLE "desktopClaim" ("scheme" TEXT PRIMARY KEY NOT NULL, "since" INTEGER NOT NULL);
                    """)
                for row in rows {
                    try db.execute(sql: "INSERT INTO app VALUES (?, ?, ?, 'run', ?, '', ?, ?)",
                                   arguments: [row.id, row.id, "/apps/\(row.id).app", row.schemes, row.source, row.time])
                }
            }
            try queue.close()
        }
        let migrated = try RegistryStore(folder: root + "/old")
        defer { try? migrated.close() }
        let fresh = try RegistryStore(folder: root + "/new")
        defer { try? fresh.close() }
        for row in rows {
            let schemes = row.schemes.split(separator: " ").compactMap { try? URLScheme(validating: String($0)) }
            try fresh.save(AppBundle(id: row.id, name: row.id, path: "/apps/\(row.id).app", executable: "run", schemes: schemes),
                           source: RegistryStore.Source(rawValue: row.source) ?? .manual, registeredAt: row.time)
        }
        let claims = try Self.indexed(migrated)
        #expect(claims == (try Self.indexed(fresh)))
        #expect(try migrated.counts() == (try fresh.counts()))
        #expect(try migrated.counts() == RegistryStore.Counts(apps: 5, schemes: 3))
        #expect(claims[try URLScheme(validating: "mail")] == [Registry.Claim(app: "a.app", since: 5), Registry.Claim(app: "b.app", since: 5)])
        #expect(claims[try URLScheme(validating: "web")] == [Registry.Claim(app: "c.app", since: 2), Registry.Claim(app: "b.app", since: 5)])
        #expect(try Self.indexed(migrated) == (try Self.recomputed(migrated)).claims)
        // The triggers are in place after the migration too.
        try migrated.delete("c.app")
        #expect(try migrated.counts() == RegistryStore.Counts(apps: 4, schemes: 3))
        try migrated.delete("e.app")
        #expect(try migrated.counts() == RegistryStore.Counts(apps: 3, schemes: 2))
    }
}

/// A file an earlier version wrote to after v7 ran (its INSERT OR REPLACE, no claim rows):
/// the rebuild makes the index and the counts equal recomputation again.
@Suite("Registry store: the claim index rebuilt")
struct RegistryStoreIndexRebuildTests {
    @Test("after writes that bypass the index, the rebuild equals recomputation")
    func rebuild() throws {
        let folder = NSTemporaryDirectory() + "lsindex-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try RegistryStore(folder: folder)
        defer { try? store.close() }
        let schemes = RegistryStoreIndexTests.schemes
        for i in 0..<6 {
            try store.save(AppBundle(id: "app.\(i)", name: "a", path: "/a/\(i).app", executable: "x", schemes: Array(schemes[i..<i + 2])), source: .manual, registeredAt: Int64(i))
        }
        // As an earlier daemon writes: a replacement and a new app, neither in the index.
        try store.database.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO app (id, name, path, executable, schemes, queriesSchemes, source, registeredAt) VALUES ('app.1', 'a', '/a/1.app', 'x', 's7', '', 'manual', 1)")
            try db.execute(sql: "INSERT OR REPLACE INTO app (id, name, path, executable, schemes, queriesSchemes, source, registeredAt) VALUES ('app.9', 'a', '/a/9.app', 'x', 's0 s7', '', 'manual', 9)")
        }
        let expected = try RegistryStoreIndexTests.recomputed(store)
        #expect(try store.counts() != expected.counts, "the earlier writes left the counts wrong")
        // A scheme read ahead of the load in such a file comes from the app rows (the file was
        // not left by a clean stop of this code), not from the index the writes left behind.
        let s7 = schemes[7]
        #expect(!store.checkSkipped)
        let claimants = Set(try #require(expected.claims[s7]).map(\.app))
        #expect(Set(try store.preview(of: s7).apps.map(\.app.id)) == claimants)
        #expect(Set(try store.preview(of: s7, fromIndex: true).apps.map(\.app.id)) != claimants, "the index left behind misses them")
        try store.rebuildClaimIndex()
        #expect(try RegistryStoreIndexTests.indexed(store) == expected.claims)
        #expect(try store.counts() == expected.counts)
    }
}
