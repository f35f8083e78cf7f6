import Foundation
import GRDB
import Testing
import LaunchServicesProtocol

/// A scheme that opens in an app keeps opening there when another app claims it later,
/// whatever the newcomer's bundle id: the earliest registration wins, `lsctl default` moves
/// it, and the registration times survive restarts, rescans and the schema upgrade.
@Suite("Scheme claims: no silent hijack")
struct SchemeClaimTests {
    /// A bundle outside the apps folder, for `lsctl register`.
    func looseBundle(_ h: DaemonHarness, id: String, schemes: [String]) throws -> String {
        let folder = h.root + "/loose/\(id).app"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var app = TestApp.test(id, schemes: schemes)
        app.id = id
        try app.plist.write(toFile: folder + "/Info.plist", atomically: true, encoding: .utf8)
        try DaemonHarness.placeExecutable("lstestapp", at: folder + "/lstestapp")
        return folder
    }

    func openedIn(_ h: DaemonHarness, _ url: String) throws -> String? {
        let r = try h.lsopen("--json", url)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        return r.json?["app"] as? String
    }

    func conflicts(_ h: DaemonHarness) throws -> [SchemeReport] {
        try h.lsctl("conflicts", "--json").decode([SchemeReport].self)
    }

    @Test("a newcomer with a smaller bundle id does not take a scheme over, across a restart and a rescan; lsctl default moves it")
    func newcomerDoesNotHijack() throws {
        // The folder watch is off: the explicit rescans below are the only ones.
        let h = try DaemonHarness(apps: [.test("holder", schemes: ["holder", "s"])], config: #"{"watchAppsFolders": false}"#)
        defer { h.stop() }
        #expect(try openedIn(h, "s:x") == "test.holder")

        // A newcomer registered by hand, and one that appears in the apps folder.
        let newcomer = try looseBundle(h, id: "aaa.newcomer", schemes: ["s"])
        let registered = try h.lsctl("register", newcomer)
        #expect(registered.status == 0, "\(registered.stderr)")
        try h.install({ var app = TestApp.test("folder", schemes: ["s"]); app.id = "aaa.folder"; return app }())
        let rescan = try h.lsctl("rescan", "--json").decode(RescanSummary.self)
        #expect(rescan.added == ["aaa.folder"])

        func expectHeld(_ when: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [ClaimReport] {
            #expect(try openedIn(h, "s:x") == "test.holder", "\(when)", sourceLocation: sourceLocation)
            let rows = try conflicts(h)
            #expect(rows.map(\.scheme) == ["s"], "\(when)", sourceLocation: sourceLocation)
            let row = try #require(rows.first, sourceLocation: sourceLocation)
            #expect(row.app == "test.holder", "\(when)", sourceLocation: sourceLocation)
            #expect(row.reason == "earliestRegistration", "\(when)", sourceLocation: sourceLocation)
            #expect(row.claimants == ["aaa.folder", "aaa.newcomer", "test.holder"], "\(when)", sourceLocation: sourceLocation)
            #expect(row.claims.map(\.app) == ["test.holder", "aaa.newcomer", "aaa.folder"], "\(when)", sourceLocation: sourceLocation)
            // ISO-8601 strings of one width compare as the times they name.
            let times = row.claims.map(\.since)
            #expect(times == times.sorted() && Set(times).count == 3, "\(when): \(times)", sourceLocation: sourceLocation)
            #expect(times.allSatisfy { $0.hasSuffix("Z") && $0.count == 24 }, "\(when): \(times)", sourceLocation: sourceLocation)
            let explained = try h.lsctl("explain", "--json", "s:x").decode(ExplainReport.self)
            #expect(explained.app == "test.holder" && explained.reason == "earliestRegistration", "\(when)", sourceLocation: sourceLocation)
            #expect(explained.claims == row.claims, "\(when)", sourceLocation: sourceLocation)
            return row.claims
        }
        let claims = try expectHeld("after the newcomers registered")
        // The human output names every claimant with its time.
        let text = try h.lsctl("conflicts").stdout
        for claim in claims { #expect(text.contains("\(claim.app) \(claim.since)"), "\(text)") }
        let explainText = try h.lsctl("explain", "s:x").stdout
        #expect(explainText.contains("registered since: \(claims[0].since)") && explainText.contains("aaa.newcomer (since \(claims[1].since))"), "\(explainText)")
        // The daemon says so, with the journal's fields.
        let log = h.daemonOutput
        for id in ["aaa.newcomer", "aaa.folder"] {
            #expect(log.contains("\(id) claims 's', held by test.holder since \(claims[0].since); test.holder keeps opening it; lsctl default s \(id) to change"), "\(log)")
        }
        let line = log.split(separator: "\n").first { $0.contains("aaa.newcomer claims 's'") } ?? ""
        #expect(line.contains("warning") && line.contains("bundle_id=aaa.newcomer") && line.contains("url_scheme=s"), "\(line)")

        let warning = "aaa.newcomer claims 's', held by test.holder since \(claims[0].since)"
        let warnedBefore = h.daemonOutput.components(separatedBy: warning).count
        try h.restart(signal: SIGKILL)
        #expect(try expectHeld("after a restart") == claims, "the times are kept")
        #expect(h.daemonOutput.components(separatedBy: warning).count > warnedBefore, "warned again at start")
        // A changed bundle keeps its time; the rescan changes nothing else.
        try h.install(.test("holder", schemes: ["holder", "s", "s2"]))
        let changed = try h.lsctl("rescan", "--json").decode(RescanSummary.self)
        #expect(changed.changed == ["test.holder"] && changed.added.isEmpty, "\(changed)")
        #expect(try expectHeld("after a rescan") == claims, "the times are kept")
        try h.restart(signal: SIGTERM)
        #expect(try expectHeld("after a second restart") == claims)

        // The user moves it.
        #expect(try h.lsctl("default", "s", "aaa.newcomer").status == 0)
        #expect(try openedIn(h, "s:x") == "aaa.newcomer")
        #expect(try conflicts(h).first?.reason == "userDefault")
        try h.restart(signal: SIGKILL)
        #expect(try openedIn(h, "s:x") == "aaa.newcomer")
        #expect(try h.lsctl("default", "s", "--clear").status == 0)
        #expect(try openedIn(h, "s:x") == "test.holder")
    }

    @Test("unregistered and registered again, an app gets a new time: it no longer holds the scheme")
    func reRegistrationGetsNewTime() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let first = try looseBundle(h, id: "zz.first", schemes: ["s"])
        let second = try looseBundle(h, id: "aa.second", schemes: ["s"])
        #expect(try h.lsctl("register", first).status == 0)
        #expect(try h.lsctl("register", second).status == 0)
        #expect(try openedIn(h, "s:x") == "zz.first")
        // Registered again from the same path while still registered: nothing changes.
        #expect(try h.lsctl("register", first).status == 0)
        #expect(try openedIn(h, "s:x") == "zz.first")
        #expect(try h.lsctl("unregister", "zz.first").status == 0)
        #expect(try h.lsctl("register", first).status == 0)
        #expect(try openedIn(h, "s:x") == "aa.second")
        #expect(h.daemonOutput.contains("zz.first claims 's', held by aa.second since"))
    }

    @Test("an app started by hand that claims a held scheme checks in as a contender, with a warning")
    func checkInDoesNotHijack() throws {
        let h = try DaemonHarness(apps: [.test("holder", schemes: ["holder", "s"])])
        defer { h.stop() }
        let bundle = try looseBundle(h, id: "aaa.handy", schemes: ["handy", "s"])
        let app = try h.startByHand(bundle: bundle)
        defer { app.stop() }
        try h.eventually("the app checks in") { try h.state(of: "aaa.handy") == "background" }
        #expect(try openedIn(h, "s:x") == "test.holder")
        #expect(try conflicts(h).first?.claims.map(\.app) == ["test.holder", "aaa.handy"])
        #expect(h.daemonOutput.contains("aaa.handy claims 's', held by test.holder since"), "\(h.daemonOutput)")
    }

    @Test("an app registered earlier whose bundle now claims a held scheme keeps its time, so it opens it: the daemon warns that it moved")
    func changedBundleClaimsHeldScheme() throws {
        let h = try DaemonHarness(apps: [.test("alpha")], config: #"{"watchAppsFolders": false}"#)
        defer { h.stop() }
        let later = try looseBundle(h, id: "zz.later", schemes: ["mail"])
        #expect(try h.lsctl("register", later).status == 0)
        #expect(try openedIn(h, "mail:x") == "zz.later")
        try h.install(.test("alpha", schemes: ["alpha", "mail"]))
        #expect(try h.lsctl("rescan", "--json").decode(RescanSummary.self).changed == ["test.alpha"])
        #expect(try openedIn(h, "mail:x") == "test.alpha", "registered first, and a changed bundle keeps its time")
        #expect(h.daemonOutput.contains("test.alpha now claims 'mail', held by zz.later until now"), "\(h.daemonOutput)")
        #expect(try h.lsctl("default", "mail", "zz.later").status == 0)
        #expect(try openedIn(h, "mail:x") == "zz.later")
    }

    @Test("a registry written by the previous schema keeps every registration and default, and the same winners")
    func migrationFromV1() throws {
        let h = try DaemonHarness(apps: [.test("alpha", schemes: ["alpha", "shared"]), .test("beta", schemes: ["beta", "shared2"])])
        defer { h.stop() }
        let looseA = try looseBundle(h, id: "aa.loose", schemes: ["shared"])
        let looseZ = try looseBundle(h, id: "zz.loose", schemes: ["shared2"])
        let file = h.root + "/state/registry.sqlite"
        try h.restart(signal: SIGTERM) {
            // Exactly what v1 wrote: its schema, its migration record, its rows.
            try EarlierDatabase.write(file, schema: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE "app" ("id" TEXT PRIMARY KEY NOT NULL, "name" TEXT NOT NULL, "path" TEXT NOT NULL, "executable" TEXT NOT NULL, "schemes" TEXT NOT NULL, "queriesSchemes" TEXT NOT NULL, "source" TEXT NOT NULL);
                    CREATE TABLE "schemeDefault" ("scheme" TEXT PRIMARY KEY NOT NULL, "bundleID" TEXT NOT NULL);
                    """) { db in
                let rows: [[DatabaseValueConvertible]] = [
                    ["test.alpha", "alpha", h.appsFolder + "/alpha.app", "lstestapp", "alpha shared", "", "folder"],
                    ["test.beta", "beta", h.appsFolder + "/beta.app", "lstestapp", "beta shared2", "", "folder"],
                    ["aa.loose", "aa.loose", looseA, "lstestapp", "shared", "", "manual"],
                    ["zz.loose", "zz.loose", looseZ, "lstestapp", "shared2", "", "manual"],
                ]
                for row in rows {
                    try db.execute(sql: "INSERT INTO app VALUES (?, ?, ?, ?, ?, ?, ?)", arguments: StatementArguments(row))
                }
                try db.execute(sql: "INSERT INTO schemeDefault VALUES ('shared2', 'zz.loose')")
            }
        }
        let apps = try h.lsctl("apps", "--json").decode([AppReport].self)
        #expect(apps.map(\.id) == ["aa.loose", "test.alpha", "test.beta", "zz.loose"], "\(apps)")
        // Every registration shares the migration's time: the smallest bundle id still wins.
        let shared = try h.lsctl("explain", "--json", "shared:x").decode(ExplainReport.self)
        #expect(shared.app == "aa.loose" && shared.reason == "earliestRegistration", "\(shared)")
        #expect(Set(shared.claims.map(\.since)).count == 1, "\(shared.claims)")
        #expect(shared.why.contains("smallest bundle id"), "\(shared.why)")
        let shared2 = try h.lsctl("explain", "--json", "shared2:x").decode(ExplainReport.self)
        #expect(shared2.app == "zz.loose" && shared2.reason == "userDefault" && shared2.userDefault == "zz.loose", "\(shared2)")
        #expect(try openedIn(h, "shared:x") == "aa.loose")
        #expect(try openedIn(h, "shared2:x") == "zz.loose")
        let (migrations, times) = try DatabaseCopy.read(file) { db in
            (try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"),
             try Int64.fetchAll(db, sql: "SELECT DISTINCT registeredAt FROM app"))
        }
        #expect(migrations == ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])
        #expect(times.count == 1 && times[0] > 1_700_000_000_000, "\(times)")

        // A newcomer after the upgrade does not take over.
        let newcomer = try looseBundle(h, id: "a.newcomer", schemes: ["shared"])
        #expect(try h.lsctl("register", newcomer).status == 0)
        #expect(try openedIn(h, "shared:x") == "aa.loose")
    }
}
