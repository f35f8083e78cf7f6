import Foundation
import LaunchServicesTesting
import Testing

/// The tools with desktop apps, through a real daemon: `lsopen --app DESKTOP-ID` (a usable
/// handler, chosen or outranked; otherwise noHandler saying why), `--can-open` (and an app's
/// `canOpenURL`) counting desktop handlers, `--background` refused, `--fallback`, an app
/// opening a desktop app's URL, `lsctl history` recording desktop opens with
/// their kind and outcome, `lsctl running` listing a desktop app while it lives, and
/// `lsctl quit DESKTOP-ID` refused.
@Suite("Desktop apps: lsopen's options and lsctl", .serialized)
struct DesktopToolsTests {
    /// Two entries for `x-pick` (the mimeapps.list default `first.desktop`, and
    /// `second.desktop`), and a hidden one.
    static func session(grace: Double = 30, exec: String = "itrecord exit0") throws -> DesktopSession {
        try DesktopSession(graceSeconds: grace) { s in
            try s.entry("first.desktop", exec: "\(exec) --first %u", schemes: ["x-pick"])
            try s.entry("second.desktop", exec: "\(exec) --second %u", schemes: ["x-pick"])
            try s.entry("hidden.desktop", exec: "\(exec) --hidden %u", schemes: ["x-pick"], extra: ["Hidden=true"])
            try s.mimeapps("[Default Applications]\nx-scheme-handler/x-pick=first.desktop\n")
        }
    }

    @Test("--app DESKTOP-ID opens in an outranked handler; a hidden or unknown ID is noHandler, saying why")
    func appOption() throws {
        let s = try Self.session()
        defer { s.stop() }
        let chosen = try s.lsopen("--json", "x-pick:0")
        #expect(chosen.string("app") == "first.desktop", "\(chosen.said)")
        let run = try s.lsopen("--json", "--app", "second.desktop", "x-pick:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("app") == "second.desktop", "\(run.said)")
        #expect(run.string("kind") == "desktop")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "--second", "x-pick:1"], "\(s.handlerRecords)")

        let hidden = try s.lsopen("--json", "--app", "hidden.desktop", "x-pick:2")
        #expect(hidden.status == 66, "\(hidden.said)")
        #expect(hidden.errorCode == "noHandler", "\(hidden.said)")
        #expect((hidden.errorMessage ?? "").lowercased().contains("hidden"), "the refusal says why: \(hidden.said)")
        let unknown = try s.lsopen("--json", "--app", "nobody.desktop", "x-pick:3")
        #expect(unknown.status == 66, "\(unknown.said)")
        #expect(unknown.errorCode == "noHandler", "\(unknown.said)")
        #expect(!s.handlerRecords.contains { $0.arguments.contains("--hidden") })
        #expect(s.handlerRecords.count == 2, "\(s.handlerRecords)")
    }

    @Test("--can-open counts desktop handlers and names the desktop ID; launches nothing")
    func canOpen() throws {
        let s = try Self.session()
        defer { s.stop() }
        let yes = try s.lsopen("--can-open", "--json", "x-pick:1")
        #expect(yes.status == 0, "\(yes.said)")
        #expect(yes.bool("canOpen") == true)
        #expect(yes.string("app") == "first.desktop", "\(yes.said)")
        let text = try s.lsopen("--can-open", "x-pick:1")
        #expect(text.status == 0 && text.stdout.contains("first.desktop"), "\(text.said)")
        let no = try s.lsopen("--can-open", "--json", "x-nothing:1")
        #expect(no.status == 1, "\(no.said)")
        #expect(no.bool("canOpen") == false)
        #expect(s.handlerRecords.isEmpty)
    }

    @Test("--background to a desktop handler is refused (invalidRequest, exit 67): a desktop app cannot be opened without coming to the front")
    func backgroundRefused() throws {
        let s = try Self.session()
        defer { s.stop() }
        let run = try s.lsopen("--json", "--background", "x-pick:1")
        #expect(run.status == 67, "\(run.said)")
        #expect(run.bool("opened") == false)
        #expect(run.errorCode == "invalidRequest", "\(run.said)")
        #expect((run.errorMessage ?? "").contains("front"), "\(run.said)")
        let text = try s.lsopen("--background", "x-pick:1")
        #expect(text.status == 67 && text.stderr.hasPrefix("lsopen: "), "\(text.said)")
        #expect(s.handlerRecords.isEmpty, "a process started: \(s.handlerRecords)")
    }

    @Test("lsctl history records desktop opens, the failed one too, with kind, outcome and pid, and no URL")
    func history() throws {
        let s = try DesktopSession(graceSeconds: 30) { s in
            try s.entry("ok.desktop", exec: "itrecord exit0 %u", schemes: ["x-ok"])
            try s.entry("bad.desktop", exec: "itrecord fail %u", schemes: ["x-bad"])
        }
        defer { s.stop() }
        let ok = try s.lsopen("--json", "x-ok:secret-token")
        let bad = try s.lsopen("--json", "x-bad:1")
        #expect(ok.status == 0 && bad.status == 68, "\(ok.said) \(bad.said)")
        let history = try s.lsctl("history", "--json")
        #expect(history.status == 0, "\(history.said)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]], "\(history.said)")
        let okEntry = try #require(entries.first { $0["app"] as? String == "ok.desktop" }, "\(history.stdout)")
        #expect(okEntry["kind"] as? String == "desktop")
        #expect(okEntry["desktopOutcome"] as? String == "forwarded")
        #expect(okEntry["outcome"] as? String == "opened")
        #expect(okEntry["scheme"] as? String == "x-ok")
        #expect((okEntry["pid"] as? NSNumber)?.intValue == ok.int("pid"))
        let badEntry = try #require(entries.first { $0["app"] as? String == "bad.desktop" }, "\(history.stdout)")
        #expect(badEntry["kind"] as? String == "desktop")
        #expect(badEntry["desktopOutcome"] as? String == "exited")
        #expect(badEntry["outcome"] as? String == "crashed")
        #expect((badEntry["pid"] as? NSNumber)?.intValue == bad.int("pid"))
        #expect(!history.stdout.contains("secret-token"), "the history holds schemes, never URLs")
    }

    @Test("lsctl running lists a desktop app the daemon started while it lives; lsctl quit DESKTOP-ID is refused and ends nothing")
    func runningAndQuit() throws {
        let s = try Self.session(grace: 0.3, exec: "itrecord sleep")
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-pick:1")
        #expect(run.string("outcome") == "running", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        s.track(pid)

        let running = try s.lsctl("running", "--json")
        #expect(running.status == 0, "\(running.said)")
        let apps = try #require(try JSONSerialization.jsonObject(with: Data(running.stdout.utf8)) as? [[String: Any]], "\(running.said)")
        let app = try #require(apps.first { $0["id"] as? String == "first.desktop" }, "\(running.stdout)")
        #expect(app["kind"] as? String == "desktop")
        #expect((app["pid"] as? NSNumber)?.int32Value == pid)
        #expect(app["state"] as? String == "running")
        #expect(try s.lsctl("running").stdout.contains("first.desktop"))

        let quit = try s.lsctl("quit", "first.desktop")
        #expect(quit.status == 1, "\(quit.said)")
        #expect(quit.stderr.contains("desktop"), "the refusal says why: \(quit.said)")
        #expect(isAlive(pid), "lsctl quit ended the desktop app")

        // Once it exits, it is no longer listed.
        s.end(pid)
        try waitUntil("first.desktop to leave lsctl running", within: 30) {
            !(try s.lsctl("running", "--json").stdout.contains("first.desktop"))
        }
    }

    @Test("--fallback: no app handles the URL, so the fallback opens in its desktop handler, and says so")
    func fallback() throws {
        let s = try Self.session()
        defer { s.stop() }
        let run = try s.lsopen("--json", "--fallback", "x-pick:store", "x-nothing:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("fallbackFrom") == "x-nothing:1", "\(run.said)")
        #expect(run.string("app") == "first.desktop", "\(run.said)")
        #expect(run.string("outcome") == "forwarded", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "--first", "x-pick:store"], "\(s.handlerRecords)")
    }

    @Test("an app's canOpenURL counts a desktop handler, and its open of that URL starts the desktop app")
    func fromAnApp() throws {
        var caller = TestApp.test("caller", "--can-open-url=x-pick:1", "--open-url=x-pick:from-app")
        caller.queriesSchemes = ["x-pick"]
        let s = try DesktopSession(graceSeconds: 30, nativeApps: [caller]) { s in
            try s.entry("first.desktop", exec: "itrecord exit0 %u", schemes: ["x-pick"])
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "caller:go")
        #expect(run.status == 0, "\(run.said)")
        let events = { ((try? String(contentsOfFile: s.eventLog, encoding: .utf8)) ?? "") }
        try waitUntil("the app's open to be answered", within: 30) { events().contains("openResult x-pick:from-app") }
        #expect(events().contains("canOpenURL x-pick:1 -> true"), "\(events())")
        #expect(events().contains("openResult x-pick:from-app opened=true app=first.desktop error=nil"), "\(events())")
        let records = try s.waitForHandlers(1)
        #expect(records.map(\.arguments) == [["exit0", "x-pick:from-app"]], "\(records)")
    }
}
