import Foundation
import GRDB
import LaunchServicesTesting
import Testing
import LaunchServicesProtocol

/// `lsctl register/unregister/default/conflicts/explain`, persistence across SIGKILL, and
/// the rule that an app cannot choose defaults.
@Suite("Registry administration")
struct RegistryAdministrationTests {
    /// `lsctl explain --json URL`, decoded.
    func explain(_ h: DaemonHarness, _ url: String) throws -> ExplainReport {
        try h.run("lsctl", ["explain", "--json", url]).decode(ExplainReport.self)
    }

    /// A bundle outside the apps folder, for `lsctl register`.
    func looseBundle(_ h: DaemonHarness, id: String, scheme: String) throws -> String {
        let folder = h.root + "/loose/\(id).app"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var app = TestApp.test(id, schemes: [scheme])
        app.id = id
        try app.plist.write(toFile: folder + "/Info.plist", atomically: true, encoding: .utf8)
        try DaemonHarness.placeExecutable("lstestapp", at: folder + "/lstestapp")
        return folder
    }

    @Test("register → SIGKILL the daemon → restart: the app and the user's default are still there")
    func persistence() throws {
        let h = try DaemonHarness(apps: [.test("alpha", schemes: ["shared"])])
        defer { h.stop() }
        let path = try looseBundle(h, id: "zz.loose", scheme: "shared")
        #expect(try h.run("lsctl", ["register", path]).status == 0)
        #expect(try h.run("lsctl", ["default", "shared", "zz.loose"]).status == 0)

        try h.restart(signal: SIGKILL)
        let explained = try explain(h, "shared:x")
        #expect(explained.app == "zz.loose")
        #expect(explained.reason == "userDefault")
        let apps = try h.run("lsctl", ["apps", "--json"]).decode([AppReport].self)
        #expect(apps.contains { $0.id == "zz.loose" } && apps.contains { $0.id == "test.alpha" })
        #expect(try h.lsopen("--json", "shared:go").json?["app"] as? String == "zz.loose")
    }

    @Test("a registration saved with a non-canonical path (by an earlier version) is made canonical at start")
    func canonicalPathMigration() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let path = try looseBundle(h, id: "zz.loose", scheme: "loose")
        #expect(try h.lsctl("register", path).status == 0)
        // Earlier versions (before the database's v4) stored the path as given: here,
        // through a symbolic link, in a database that has not had v4 yet.
        try FileManager.default.createSymbolicLink(atPath: h.root + "/alias", withDestinationPath: h.root + "/loose")
        let alias = h.root + "/alias/zz.loose.app"
        try h.restart(signal: SIGTERM) {
            let db = try DatabaseQueue(path: h.root + "/state/registry.sqlite")
            try db.write {
                try $0.execute(sql: "UPDATE app SET path = ? WHERE id = 'zz.loose'", arguments: [alias])
                try $0.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v4'")
            }
        }
        let apps = try h.lsctl("apps", "--json").stdout
        #expect(apps.contains("\"\(path)\"") && !apps.contains("alias"), "\(apps)")
        // The same bundle by its real path is the same registration, not a clash.
        let again = try h.lsctl("register", path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try h.lsopen("loose:x").status == 0)
    }

    @Test("explain names the winner and the reason: only claimant, the rule, the user's default")
    func explainThreeCases() throws {
        let h = try DaemonHarness(apps: [.test("solo"), .test("bbb", schemes: ["both"]), .test("aaa", schemes: ["both"])])
        defer { h.stop() }
        let only = try explain(h, "solo:1")
        #expect(only.app == "test.solo")
        #expect(only.reason == "onlyClaimant")
        let rule = try explain(h, "both:1")
        #expect(rule.app == "test.aaa")
        #expect(rule.reason == "earliestRegistration", "registered in one scan: a tie, the smallest bundle id")
        #expect(rule.claimants == ["test.aaa", "test.bbb"])
        #expect(try h.run("lsctl", ["default", "both", "test.bbb"]).status == 0)
        let chosen = try explain(h, "both:1")
        #expect(chosen.app == "test.bbb")
        #expect(chosen.reason == "userDefault")
        #expect(chosen.userDefault == "test.bbb")
        let text = try h.run("lsctl", ["explain", "both:1"]).stdout
        #expect(text.contains("the user chose test.bbb") && text.contains("also claimed by: test.aaa"))
        let none = try explain(h, "nobody:1")
        #expect(none.reason == "noHandler")
        #expect(none.app == nil)

        let schemes = try h.run("lsctl", ["schemes", "--json"]).stdout
        #expect(schemes.contains("\"scheme\" : \"solo\"") && schemes.contains("\"reason\" : \"onlyClaimant\""))
        let conflicts = try h.run("lsctl", ["conflicts", "--json"]).stdout
        #expect(conflicts.contains("\"scheme\" : \"both\"") && !conflicts.contains("\"scheme\" : \"solo\""))
        #expect(try h.query(.conflicts, as: [SchemeReport].self).map(\.scheme) == ["both"])
        #expect(try h.query(.schemes, as: [SchemeReport].self).map(\.scheme) == ["both", "solo"])
        #expect(try h.run("lsctl", ["default", "both", "--clear"]).status == 0)
        #expect(try explain(h, "both:1").app == "test.aaa")
        #expect(h.daemonOutput.contains("default handler for 'both' changed from (none) to test.bbb"))
    }

    @Test("register says which declared schemes stay with another app, who holds each, and why")
    func registerNamesSchemesItDoesNotWin() throws {
        let h = try DaemonHarness(apps: [.test("alpha", schemes: ["shared", "mine"]), .test("beta", schemes: ["chosen"]), .test("other", schemes: ["chosen"])])
        defer { h.stop() }
        #expect(try h.lsctl("default", "chosen", "test.other").status == 0)
        let folder = h.root + "/loose/later.app"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var later = TestApp.test("later", schemes: ["shared", "chosen", "newscheme"])
        later.id = "aaa.later"
        try later.plist.write(toFile: folder + "/Info.plist", atomically: true, encoding: .utf8)
        try DaemonHarness.placeExecutable("lstestapp", at: folder + "/lstestapp")

        let run = try h.lsctl("register", folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("registered aaa.later (shared, chosen, newscheme)"), "\(run.stdout)")
        #expect(run.stdout.contains("'shared:' still opens with test.alpha (registered first, since 20"), "\(run.stdout)")
        #expect(run.stdout.contains("lsctl default shared aaa.later to open it with aaa.later"), "\(run.stdout)")
        #expect(run.stdout.contains("'chosen:' still opens with test.other (your default)"), "\(run.stdout)")
        #expect(!run.stdout.contains("'newscheme:'"), "a scheme it wins is not listed: \(run.stdout)")

        // Registered again from the same path: the same answer, as JSON.
        let report = try h.lsctl("register", "--json", folder).decode(RegisterReport.self)
        #expect(report.heldByOthers.map(\.scheme) == ["shared", "chosen"], "\(report)")
        #expect(report.heldByOthers.map(\.app) == ["test.alpha", "test.other"])
        #expect(report.heldByOthers.map(\.reason) == ["earliestRegistration", "userDefault"])
        #expect(try explain(h, "shared:x").app == "test.alpha", "nothing was taken over")
    }

    @Test("an app cannot make itself the default")
    func appCannotChooseDefault() throws {
        let h = try DaemonHarness(apps: [.test("grabby", schemes: ["grabby", "both"], "--claim-default=both"), .test("aaa", schemes: ["both"])])
        defer { h.stop() }
        #expect(try h.lsopen("grabby:1").status == 0)
        #expect(h.eventNames().contains("claimDefault both -> notPermitted"))
        #expect(try explain(h, "both:1").app == "test.aaa")
    }

    @Test("an app cannot unregister another app (nor register one)")
    func appCannotUnregister() throws {
        let h = try DaemonHarness(apps: [.test("rival", "--unregister=test.victim"), .test("victim")])
        defer { h.stop() }
        #expect(try h.lsopen("rival:1").status == 0)
        #expect(h.eventNames().contains("unregister test.victim -> notPermitted"))
        #expect(try h.lsopen("victim:1").status == 0, "the victim is still registered")
    }

    @Test("bad registrations are refused with a named error and register nothing")
    func badInput() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let missing = try h.run("lsctl", ["register", h.root + "/no-such.app"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no readable Info.plist"))
        let clash = try looseBundle(h, id: "test.alpha", scheme: "other")
        let duplicate = try h.run("lsctl", ["register", clash])
        #expect(duplicate.stderr.contains("already registered from"))
        let unknown = try h.run("lsctl", ["unregister", "no.such.id"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("'no.such.id'"))
        let notClaimant = try h.run("lsctl", ["default", "alpha", "no.such.id"])
        #expect(notClaimant.status == 1)
        let badScheme = try h.run("lsctl", ["default", "1bad", "test.alpha"])
        #expect(badScheme.stderr.contains("must start with a letter"))
        #expect(try h.lsopen("--json", "other:x").errorCode == "noHandler")
        let apps = try h.run("lsctl", ["apps", "--json"]).decode([AppReport].self)
        #expect(apps.map(\.id) == ["test.alpha"], "only test.alpha: \(apps)")
    }
}

@Suite("Apps folder rescans")
struct RescanTests {
    @Test("a bundle added, changed or removed in an apps folder is noticed without a restart")
    func inotify() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        try h.install(.test("beta"))
        try h.eventually("the new bundle is registered") { try h.lsopen("--can-open", "beta:x").status == 0 }
        // Changing the Info.plist of a bundle re-reads it.
        try h.install(.test("alpha", schemes: ["alpha", "alpha2"]))
        try h.eventually("the changed Info.plist is re-read") { try h.lsopen("--can-open", "alpha2:x").status == 0 }
        try FileManager.default.removeItem(atPath: h.appsFolder + "/beta.app")
        try h.eventually("the removed bundle is unregistered") { try h.lsopen("--can-open", "beta:x").status == 1 }
        #expect(h.daemonOutput.contains("apps folders rescanned"))
    }

    @Test("an apps folder missing at start is watched once it appears, and again after it is deleted and recreated")
    func folderAppearsLater() throws {
        let scratchFolder = try TemporaryFolder(prefix: "lsit-late")
        defer { scratchFolder.remove() }
        let scratch = scratchFolder.path
        // Two levels missing: the watch has to move down as each appears.
        let folder = scratch + "/late/apps"
        let h = try DaemonHarness(apps: [.test("alpha")], extraArguments: ["--apps", folder])
        defer { h.stop() }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try h.install(.test("beta"), in: folder)
        try h.eventually("the bundle in the new folder is registered") { try h.lsopen("--can-open", "beta:x").status == 0 }
        #expect(try h.lsopen("beta:1").status == 0)

        try FileManager.default.removeItem(atPath: folder)
        try h.eventually("the deleted folder's bundle is withdrawn") { try h.lsopen("--can-open", "beta:x").status == 1 }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try h.install(.test("gamma"), in: folder)
        try h.eventually("the bundle in the recreated folder is registered") { try h.lsopen("--can-open", "gamma:x").status == 0 }
        #expect(try h.lsopen("gamma:1").status == 0)

        // Renamed away and replaced: the old folder's bundles go, the new one's come.
        try FileManager.default.moveItem(atPath: folder, toPath: scratch + "/moved-away")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try h.install(.test("delta"), in: folder)
        try h.eventually("the replacement folder's bundle is registered") { try h.lsopen("--can-open", "delta:x").status == 0 }
        try h.eventually("the renamed folder's bundle is withdrawn") { try h.lsopen("--can-open", "gamma:x").status == 1 }
        #expect(try h.lsopen("--can-open", "alpha:x").status == 0)
    }

    @Test("lsctl rescan reports what changed, and a rescan survives a restart")
    func explicitRescan() throws {
        // Without the folder watch only the explicit rescan can find a change: its report
        // is exact, not raced by the watch's own rescan.
        let h = try DaemonHarness(apps: [.test("alpha")], config: #"{"watchAppsFolders": false}"#)
        defer { h.stop() }
        var changed = TestApp.test("alpha", schemes: ["alpha", "alpha2"])
        changed.behavior = []
        try changed.plist.write(toFile: h.appsFolder + "/alpha.app/Info.plist", atomically: true, encoding: .utf8)
        #expect(try h.lsopen("--can-open", "alpha2:x").status == 1, "not seen before the rescan")
        let r = try h.run("lsctl", ["rescan", "--json"])
        #expect(r.status == 0)
        let summary = try r.decode(RescanSummary.self)
        #expect(summary.changed == ["test.alpha"], "\(r.stdout)")
        #expect(summary.added.isEmpty, "\(r.stdout)")
        #expect(summary.removed.isEmpty, "\(r.stdout)")
        #expect(try h.lsopen("--can-open", "alpha2:x").status == 0)
        // A bundle added to the folder is registered by the rescan, exactly once.
        try h.install(.test("gamma"))
        let added = try h.run("lsctl", ["rescan", "--json"])
        #expect(try added.decode(RescanSummary.self).added == ["test.gamma"], "\(added.stdout)")
        let apps = try h.lsctl("apps", "--json").decode([AppReport].self)
        #expect(apps.filter { $0.id == "test.gamma" }.count == 1, "\(apps)")
        try FileManager.default.removeItem(atPath: h.appsFolder + "/gamma.app")
        try h.restart(signal: SIGKILL)
        #expect(try h.lsopen("--can-open", "gamma:x").status == 1, "a bundle that left its folder is withdrawn at start")
        #expect(try h.lsopen("--can-open", "alpha2:x").status == 0)
    }

    /// A bundle whose executable is missing: refused, with its scheme declared.
    static var broken: TestApp {
        var app = TestApp.test("broken")
        app.executable = "no-such-executable"
        return app
    }

    @Test("a bundle refused at a rescan by the folder watch is logged with the reason, once; explain names it")
    func refusedByWatch() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        try h.install(Self.broken)
        try h.eventually("the watch's rescan logs the refusal") { h.daemonOutput.contains("bundle refused: bundle ") && h.daemonOutput.contains("/broken.app: CFBundleExecutable") }
        let explain = try h.lsctl("explain", "--json", "broken:x").decode(ExplainReport.self)
        #expect(explain.app == nil)
        #expect(explain.refusedClaims.map(\.path).allSatisfy { $0.hasSuffix("/broken.app") } && explain.refusedClaims.count == 1, "\(explain)")
        #expect(explain.refusedClaims.first?.reason.contains("CFBundleExecutable names 'no-such-executable'") == true, "\(explain)")
        #expect(explain.why.contains("declares it but was refused"), "\(explain.why)")
        let text = try h.lsctl("explain", "broken:x").stdout
        #expect(text.contains("refused bundle declaring it: ") && text.contains("/broken.app: CFBundleExecutable names 'no-such-executable'"), "\(text)")
        // Still refused at the next rescan, for the same reason: not logged again.
        #expect(try h.lsctl("rescan").stdout.contains("refused: bundle "))
        #expect(h.daemonOutput.components(separatedBy: "/broken.app: CFBundleExecutable").count == 2, "logged once: \(h.daemonOutput)")
    }

    @Test("a bundle refused at lsctl rescan is logged with the reason, as at start")
    func refusedByExplicitRescan() throws {
        let h = try DaemonHarness(apps: [.test("alpha")], config: #"{"watchAppsFolders": false}"#)
        defer { h.stop() }
        try h.install(Self.broken)
        let rescan = try h.lsctl("rescan", "--json").decode(RescanSummary.self)
        #expect(rescan.refused.count == 1, "\(rescan)")
        #expect(h.daemonOutput.contains("bundle refused: bundle ") && h.daemonOutput.contains("/broken.app: CFBundleExecutable names 'no-such-executable'"), "\(h.daemonOutput)")
        #expect(try h.lsctl("explain", "--json", "broken:x").decode(ExplainReport.self).refusedClaims.count == 1)
        #expect(try h.lsctl("explain", "--json", "alpha:x").decode(ExplainReport.self).refusedClaims.isEmpty)
    }
}
