import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// Which app a real daemon opens a URL in when desktop entries handle its scheme: an
/// uninstalled or hidden entry is skipped (the next candidate opens, or none does); across
/// native apps and desktop entries no app installed later silently takes a scheme another
/// already serves, in either order; the user's default naming a desktop file ID wins; and
/// the entry `lsctl export-xdg` writes for `lsopen` is never chosen, even as the
/// `mimeapps.list` default.
@Suite("Desktop apps: which handler opens the URL", .serialized)
struct DesktopHandlerChoiceTests {
    @Test("an uninstalled program (TryExec, or the Exec program, not on PATH) is skipped: the next default opens; with none left, noHandler")
    func uninstalledSkipped() throws {
        let s = try DesktopSession { s in
            try s.entry("a-tryexec.desktop", exec: "itrecord exit0 --a %u", schemes: ["x-skip"], extra: ["TryExec=it-not-installed"])
            try s.entry("b-exec.desktop", exec: "it-not-installed-either %u", schemes: ["x-skip"])
            try s.entry("c-installed.desktop", exec: "itrecord exit0 --c %u", schemes: ["x-skip"])
            try s.entry("only-missing.desktop", exec: "it-not-installed %u", schemes: ["x-none"])
            try s.mimeapps("[Default Applications]\nx-scheme-handler/x-skip=a-tryexec.desktop;b-exec.desktop;c-installed.desktop;\n")
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-skip:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("app") == "c-installed.desktop", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "--c", "x-skip:1"], "\(s.handlerRecords)")

        let none = try s.lsopen("--json", "x-none:1")
        #expect(none.status == 66, "\(none.said)")
        #expect(none.errorCode == "noHandler", "\(none.said)")
        #expect(s.handlerRecords.count == 1, "only c-installed ran: \(s.handlerRecords)")
    }

    @Test("a Hidden=true entry is skipped though mimeapps.list names it; a scheme only a hidden entry declares has no handler")
    func hiddenSkipped() throws {
        let s = try DesktopSession { s in
            try s.entry("hidden.desktop", exec: "itrecord exit0 --hidden %u", schemes: ["x-hide", "x-only-hidden"], extra: ["Hidden=true"])
            try s.entry("visible.desktop", exec: "itrecord exit0 --visible %u", schemes: ["x-hide"])
            try s.mimeapps("[Default Applications]\nx-scheme-handler/x-hide=hidden.desktop\nx-scheme-handler/x-only-hidden=hidden.desktop\n")
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-hide:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("app") == "visible.desktop", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "--visible", "x-hide:1"], "\(s.handlerRecords)")

        let none = try s.lsopen("--json", "x-only-hidden:1")
        #expect(none.status == 66, "\(none.said)")
        #expect(none.errorCode == "noHandler", "\(none.said)")
        #expect(!s.handlerRecords.contains { $0.arguments.contains("--hidden") }, "\(s.handlerRecords)")
    }

    @Test("a native app registered first keeps its scheme when a desktop entry for it appears later")
    func nativeFirstKeepsScheme() throws {
        let s = try DesktopSession(nativeApps: [.test("native", schemes: ["x-both"])])
        defer { s.stop() }
        try s.waitForLog("desktop entries read: 0 entries")
        try s.entry("late.desktop", exec: "itrecord exit0 %u", schemes: ["x-both"])
        // The desktop side now has a handler for the scheme; the native app still opens it.
        try s.waitForDesktopChoice("x-both", "late.desktop")
        let run = try s.lsopen("--json", "x-both:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("app") == "test.native", "\(run.said)")
        #expect(run.string("kind") == "native", "\(run.said)")
        #expect(run.json?["desktopID"] == nil)
        #expect(s.handlerRecords.isEmpty, "the desktop entry ran: \(s.handlerRecords)")
        #expect(s.nativeAppPIDs.count == 1)
    }

    @Test("a desktop entry that handled a scheme first keeps it when a native app declaring it is installed later")
    func desktopFirstKeepsScheme() throws {
        let s = try DesktopSession { s in try s.entry("early.desktop", exec: "itrecord exit0 %u", schemes: ["x-both"]) }
        defer { s.stop() }
        try s.waitForLog("desktop entries read: 1 entries")
        let before = try s.lsopen("--json", "x-both:0")
        #expect(before.status == 0 && before.string("app") == "early.desktop", "\(before.said)")

        try s.install(.test("native", schemes: ["x-both"]))
        let rescan = try s.lsctl("rescan")
        #expect(rescan.status == 0, "\(rescan.said)")
        try waitUntil("test.native to be registered", within: 30) { try s.lsctl("apps").stdout.contains("test.native") }
        let run = try s.lsopen("--json", "x-both:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("kind") == "desktop", "\(run.said)")
        #expect(run.string("app") == "early.desktop", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "x-both:1"], "\(s.handlerRecords)")
        #expect(s.nativeAppPIDs.isEmpty, "the native app was launched")
    }

    @Test("the user's default naming a desktop file ID wins over a native app registered first and over the mimeapps.list default; --clear returns to the rule")
    func userDefaultNamesDesktopID() throws {
        let s = try DesktopSession(nativeApps: [.test("native", schemes: ["x-pref"])]) { s in
            try s.entry("chosen.desktop", exec: "itrecord exit0 --chosen %u", schemes: ["x-pref"])
            try s.entry("other.desktop", exec: "itrecord exit0 --other %u", schemes: ["x-pref"])
            try s.mimeapps("[Default Applications]\nx-scheme-handler/x-pref=other.desktop\n")
        }
        defer { s.stop() }
        try s.waitForLog("desktop entries read: 2 entries")
        // Both first seen by one start: the native app (the tie's rule).
        #expect(try s.lsopen("--can-open", "--json", "x-pref:0").string("app") == "test.native")

        let set = try s.lsctl("default", "x-pref", "chosen.desktop")
        #expect(set.status == 0, "\(set.said)")
        let run = try s.lsopen("--json", "x-pref:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("kind") == "desktop", "\(run.said)")
        #expect(run.string("app") == "chosen.desktop", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "--chosen", "x-pref:1"], "\(s.handlerRecords)")

        // Kept across a restart (it is in the database).
        s.stopDaemon()
        try s.startDaemon()
        let again = try s.lsopen("--json", "x-pref:2")
        #expect(again.string("app") == "chosen.desktop", "\(again.said)")

        let clear = try s.lsctl("default", "x-pref", "--clear")
        #expect(clear.status == 0, "\(clear.said)")
        #expect(try s.lsopen("--can-open", "--json", "x-pref:3").string("app") == "test.native")
        #expect(s.nativeAppPIDs.isEmpty, "--can-open launched nothing")
    }

    @Test("the entry lsctl export-xdg writes (Exec=lsopen %u) is never chosen, even as the mimeapps.list default: the other entry opens, or none")
    func exportedEntryNeverChosen() throws {
        let s = try DesktopSession(nativeApps: [.test("exported", schemes: ["x-exp"])])
        defer { s.stop() }
        // The native app's scheme is exported: our entry, and the mimeapps.list default.
        let export = try s.lsctl("export-xdg")
        #expect(export.status == 0, "\(export.said)")
        let ours = s.applications + "/" + DesktopEntryCheck.exportedEntryID
        let written = try String(contentsOfFile: ours, encoding: .utf8)
        #expect(written.contains("x-scheme-handler/x-exp;") && written.contains("lsopen"), "\(written)")
        let mimeapps = try String(contentsOfFile: s.configHome + "/mimeapps.list", encoding: .utf8)
        #expect(mimeapps.contains("x-scheme-handler/x-exp=\(DesktopEntryCheck.exportedEntryID)"), "\(mimeapps)")
        // A real desktop handler appears, and the native app goes.
        try s.entry("real.desktop", exec: "itrecord exit0 %u", schemes: ["x-exp"])
        try s.waitForDesktopChoice("x-exp", "real.desktop")
        try FileManager.default.removeItem(atPath: s.appsFolder + "/exported.app")
        _ = try s.lsctl("rescan")
        try waitUntil("test.exported to be unregistered", within: 30) { try !s.lsctl("apps").stdout.contains("test.exported") }

        let run = try s.lsopen("--json", "x-exp:1")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("kind") == "desktop", "\(run.said)")
        #expect(run.string("app") == "real.desktop", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "x-exp:1"], "\(s.handlerRecords)")
        #expect(!s.output.contains("is now \(DesktopEntryCheck.exportedEntryID)"), "the exported entry was chosen at some read")

        // Only our entry left: no handler, never lsopen launching lsopen.
        try FileManager.default.removeItem(atPath: s.applications + "/real.desktop")
        try s.waitForLog("desktop handler for 'x-exp' is now none")
        let none = try s.lsopen("--json", "x-exp:2")
        #expect(none.status == 66, "\(none.said)")
        #expect(none.errorCode == "noHandler", "\(none.said)")
        #expect(s.handlerRecords.count == 1)
    }
}
