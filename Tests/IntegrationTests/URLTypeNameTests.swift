import Foundation
import GRDB
import Testing
import LaunchServicesProtocol

/// `CFBundleURLName`, the kind of each URL type an app declares: kept with the registration,
/// shown by `lsctl apps`, `schemes` and `explain` (JSON and human), kept across the schema
/// upgrade; and the full demo app's check for the lite app at every launch.
@Suite("URL type names and the lite app check")
struct URLTypeNameTests {
    static let lite = "com.example.numerology-lite"
    static let full = "com.example.numerology"

    @Test("lsctl apps, schemes and explain show each URL type's CFBundleURLName (JSON and text)")
    func shown() throws {
        let h = try DaemonHarness(apps: [try .demo("liteapp"), try .demo("fullapp"), .test("plain")])
        defer { h.stop() }
        let apps = try h.lsctl("apps", "--json").decode([AppReport].self)
        let full = try #require(apps.first { $0.id == Self.full })
        #expect(full.urlTypes == [URLTypeReport(name: Self.full, schemes: ["fullapp"])], "\(full)")
        let lite = try #require(apps.first { $0.id == Self.lite })
        #expect(lite.urlTypes == [URLTypeReport(name: Self.lite, schemes: ["liteapp"])], "\(lite)")

        let schemes = try h.lsctl("schemes", "--json").decode([SchemeReport].self)
        #expect(schemes.first { $0.scheme == "liteapp" }?.kind == Self.lite, "\(schemes)")
        #expect(schemes.first { $0.scheme == "fullapp" }?.kind == Self.full, "\(schemes)")

        let explain = try h.lsctl("explain", "--json", "liteapp://export").decode(ExplainReport.self)
        #expect(explain.app == Self.lite && explain.kind == Self.lite, "\(explain)")
        let none = try h.lsctl("explain", "--json", "nothing:x").decode(ExplainReport.self)
        #expect(none.kind == nil)

        let text = try h.lsctl("schemes").stdout
        #expect(text.contains("KIND") && text.contains(Self.lite), "\(text)")
        #expect(try h.lsctl("explain", "liteapp://export").stdout.contains("kind: \(Self.lite) (CFBundleURLName)"))
        #expect(try h.lsctl("apps").stdout.contains("\(Self.full): fullapp"))
    }

    @Test("an app asking sees only the URL types of the schemes it may query, and its own in full")
    func appSeesOnlyQueryable() throws {
        let out = try AppIdentityTests.scratchFolder("lsurlname")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let lsctl = DaemonHarness.binary("lsctl")
        let script = "\(lsctl) apps --json >\(out)/apps.json 2>&1; \(lsctl) schemes --json >\(out)/schemes.json 2>&1"
        var asker = TestApp.test("asker", schemes: ["asker"], "--child-run=\(script)")
        asker.queriesSchemes = ["alpha"]
        let alpha = TestApp(folder: "alpha", id: "test.alpha", schemes: [], executable: "lstestapp", rawPlist: """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>test.alpha</string><key>CFBundleExecutable</key><string>lstestapp</string>
            <key>CFBundleURLTypes</key><array>
            <dict><key>CFBundleURLName</key><string>com.acme.alpha</string><key>CFBundleURLSchemes</key><array><string>alpha</string></array></dict>
            <dict><key>CFBundleURLName</key><string>com.acme.secret</string><key>CFBundleURLSchemes</key><array><string>secret</string></array></dict>
            </array></dict></plist>
            """)
        let h = try DaemonHarness(apps: [alpha, asker])
        defer { h.stop() }
        // The user sees both URL types.
        let all = try h.lsctl("apps", "--json").decode([AppReport].self).first { $0.id == "test.alpha" }
        #expect(all?.urlTypes.map(\.name) == ["com.acme.alpha", "com.acme.secret"], "\(String(describing: all))")

        #expect(try h.lsopen("asker:go").status == 0)
        try h.eventually("the child's queries ran") { h.eventNames().contains { $0.hasPrefix("childRun -> ") } }
        let apps = try JSONDecoder().decode([AppReport].self, from: Data(contentsOf: URL(fileURLWithPath: out + "/apps.json")))
        #expect(apps.map(\.id) == ["test.alpha", "test.asker"], "\(apps)")
        #expect(apps.first { $0.id == "test.alpha" }?.urlTypes == [URLTypeReport(name: "com.acme.alpha", schemes: ["alpha"])],
                "not com.acme.secret: \(apps)")
        #expect(apps.first { $0.id == "test.asker" }?.urlTypes == [URLTypeReport(name: "test.asker", schemes: ["asker"])], "its own: \(apps)")
        let schemes = try JSONDecoder().decode([SchemeReport].self, from: Data(contentsOf: URL(fileURLWithPath: out + "/schemes.json")))
        #expect(schemes.map(\.scheme) == ["alpha", "asker"] && schemes.first?.kind == "com.acme.alpha", "the queryable scheme and its own, not secret: \(schemes)")
    }

    @Test("a registry written by schema v2 keeps every registration; its apps get no names until scanned again")
    func migrationFromV2() throws {
        let h = try DaemonHarness(apps: [try .demo("liteapp")])
        defer { h.stop() }
        let looseFolder = h.root + "/loose"
        try h.install(try .demo("fullapp"), in: looseFolder)
        let file = h.root + "/state/registry.sqlite"
        try h.restart(signal: SIGTERM) {
            // Exactly what v2 wrote: its schema, its migration records, its rows.
            try EarlierDatabase.write(file, schema: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2');
                    CREATE TABLE "app" ("id" TEXT PRIMARY KEY NOT NULL, "name" TEXT NOT NULL, "path" TEXT NOT NULL, "executable" TEXT NOT NULL, "schemes" TEXT NOT NULL, "queriesSchemes" TEXT NOT NULL, "source" TEXT NOT NULL, "registeredAt" INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE "schemeDefault" ("scheme" TEXT PRIMARY KEY NOT NULL, "bundleID" TEXT NOT NULL);
                    """) { db in
                try db.execute(sql: "INSERT INTO app VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: [Self.full, "Numerology", looseFolder + "/fullapp.app", "fullapp", "fullapp", "liteapp", "manual", 1_700_000_000_123])
                try db.execute(sql: "INSERT INTO app VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: [Self.lite, "Numerology Lite", h.appsFolder + "/liteapp.app", "liteapp", "liteapp", "", "folder", 1_700_000_000_456])
            }
        }
        let apps = try h.lsctl("apps", "--json").decode([AppReport].self)
        #expect(apps.map(\.id) == [Self.full, Self.lite], "\(apps)")
        let full = try #require(apps.first { $0.id == Self.full })
        #expect(full.schemes == ["fullapp"] && full.queriesSchemes == ["liteapp"] && full.urlTypes == [], "a manual registration keeps everything, and has no names yet: \(full)")
        let lite = try #require(apps.first { $0.id == Self.lite })
        #expect(lite.urlTypes == [URLTypeReport(name: Self.lite, schemes: ["liteapp"])], "the apps folder is read again at start: \(lite)")
        let claims = try h.lsctl("schemes", "--json").decode([SchemeReport].self).flatMap(\.claims)
        #expect(claims.contains(ClaimReport(app: Self.full, since: "2023-11-14T22:13:20.123Z")), "\(claims)")
        #expect(claims.contains(ClaimReport(app: Self.lite, since: "2023-11-14T22:13:20.456Z")), "\(claims)")
        let migrations = try DatabaseCopy.read(file) { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") }
        #expect(migrations == ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])

        // Registering again brings the names.
        #expect(try h.lsctl("register", looseFolder + "/fullapp.app").status == 0)
        let again = try h.lsctl("apps", "--json").decode([AppReport].self).first { $0.id == Self.full }
        #expect(again?.urlTypes == [URLTypeReport(name: Self.full, schemes: ["fullapp"])], "\(String(describing: again))")
    }

    @Test("a registry written by schema v4 (URL types as JSON in the app row) keeps every name: v5 moves them to rows")
    func migrationFromV4() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let looseFolder = h.root + "/loose"
        try h.install(try .demo("fullapp"), in: looseFolder)
        let file = h.root + "/state/registry.sqlite"
        try h.restart(signal: SIGTERM) {
            // What v4 wrote: the URL types as one JSON array per app.
            try EarlierDatabase.write(file, schema: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2'), ('v3'), ('v4');
                    CREATE TABLE "app" ("id" TEXT PRIMARY KEY NOT NULL, "name" TEXT NOT NULL, "path" TEXT NOT NULL, "executable" TEXT NOT NULL, "schemes" TEXT NOT NULL, "queriesSchemes" TEXT NOT NULL, "source" TEXT NOT NULL, "registeredAt" INTEGER NOT NULL DEFAULT 0, "urlTypes" TEXT NOT NULL DEFAULT '');
                    CREATE TABLE "schemeDefault" ("scheme" TEXT PRIMARY KEY NOT NULL, "bundleID" TEXT NOT NULL);
                    """) { db in
                try db.execute(sql: "INSERT INTO app VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: [Self.full, "Numerology", looseFolder + "/fullapp.app", "fullapp", "fullapp numbers", "liteapp", "manual", 1_700_000_000_123,
                                           #"[{"name":"com.example.numerology","schemes":["fullapp"]},{"schemes":["numbers"]}]"#])
            }
        }
        let full = try #require(try h.lsctl("apps", "--json").decode([AppReport].self).first { $0.id == Self.full })
        #expect(full.schemes == ["fullapp", "numbers"] && full.queriesSchemes == ["liteapp"], "\(full)")
        #expect(full.urlTypes == [URLTypeReport(name: Self.full, schemes: ["fullapp"]), URLTypeReport(name: nil, schemes: ["numbers"])], "\(full)")
        let (migrations, columns) = try DatabaseCopy.read(file) { db in
            (try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"), try db.columns(in: "app").map(\.name))
        }
        #expect(migrations == ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])
        #expect(!columns.contains("urlTypes"), "\(columns)")
        // The names survive another restart (read from their rows now), and unregistering removes them.
        try h.restart(signal: SIGKILL)
        #expect(try h.lsctl("apps", "--json").decode([AppReport].self).first { $0.id == Self.full }?.urlTypes.count == 2)
        #expect(try h.lsctl("unregister", Self.full).status == 0)
        let left = try DatabaseCopy.read(file) { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM urlType") }
        #expect(left == 0)
    }

    /// The lines fullapp's launch check appended to its own storage.
    func launchChecks(_ h: DaemonHarness) -> [String] {
        ((try? String(contentsOfFile: h.dataHome + "/\(Self.full)/launch-checks", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("fullapp checks for the lite app at every launch: found while registered, not after lsctl unregister")
    func liteCheckAtEveryLaunch() throws {
        let h = try DaemonHarness(apps: [try .demo("fullapp")])
        defer { h.stop() }
        let looseFolder = h.root + "/loose"
        try h.install(try .demo("liteapp"), in: looseFolder)
        #expect(try h.lsctl("register", looseFolder + "/liteapp.app").status == 0)

        // First launch: the lite app is there; the user is thanked and the data comes over.
        #expect(try h.lsopen("fullapp://launch").status == 0)
        try h.eventually("the first launch's check") { launchChecks(h) == ["liteInstalled"] }
        try h.eventually("the import") { h.appOutput.contains("[fullapp] imported 3 notes from the lite version") }
        let log = h.appOutput
        #expect(log.contains("[fullapp] launch check: the lite version is installed"), "\(log)")
        #expect(log.contains("[fullapp] an upgrade from the lite version: thank you for buying the full version!"), "\(log)")

        // Second launch, after the lite app is unregistered: the check says so.
        #expect(try h.lsctl("unregister", Self.lite).status == 0)
        try h.restart(signal: SIGTERM)
        #expect(try h.lsopen("fullapp://launch").status == 0)
        try h.eventually("the second launch's check") { launchChecks(h) == ["liteInstalled", "noLiteVersion"] }
        #expect(h.appOutput.contains("[fullapp] launch check: no lite version installed"), "\(h.appOutput)")
    }
}
