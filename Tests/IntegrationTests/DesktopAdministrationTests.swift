import Foundation
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// The administration of desktop-entry handlers with a real daemon, real `lsctl` and `lsopen`,
/// and real desktop entries in private XDG folders: `explain` names the file and line that
/// chose, and why every other candidate lost (text and `--json`); `default` takes a desktop
/// file ID, which changes the resolution and survives a restart, and a refusal says why;
/// `conflicts`, `schemes` and `register` name both kinds; `status` says how the desktop
/// entries were read; lsopen's chooser lists both kinds.
@Suite("Desktop entries administered with lsctl", .serialized)
struct DesktopAdministrationTests {
    /// Private XDG folders: `~` is `root/home`, the system's folders `root/etc` and
    /// `root/usr/share`, and `prog` (a program that exits at once) is on PATH.
    ///
    /// `mailto`: mail.desktop, chosen by `~/.config/mimeapps.list:2 [Default Applications]`;
    /// other.desktop, ranked after it; thunderbird.desktop, whose program is not on PATH.
    /// `irc`: irc.desktop only.
    final class Folders {
        let root: String

        init() throws {
            root = try TemporaryFolder(prefix: "ls-desktop-admin").path
            try writeFile("#!/bin/sh\nexit 0\n", to: root + "/bin/prog")
            chmod(root + "/bin/prog", 0o755)
            let applications = root + "/usr/share/applications"
            try writeFile(Self.entry("mailto"), to: applications + "/mail.desktop")
            try writeFile(Self.entry("mailto"), to: applications + "/other.desktop")
            try writeFile("[Desktop Entry]\nType=Application\nName=t\nExec=thunderbird %u\nMimeType=x-scheme-handler/mailto;\n", to: applications + "/thunderbird.desktop")
            try writeFile(Self.entry("irc"), to: applications + "/irc.desktop")
            try writeFile("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop;mail.desktop;\n", to: root + "/home/.config/mimeapps.list")
        }

        static func entry(_ scheme: String) -> String {
            "[Desktop Entry]\nType=Application\nName=x\nExec=prog %u\nMimeType=x-scheme-handler/\(scheme);\n"
        }

        /// The daemon's environment: the machine's own desktop folders and desktop are not read.
        var environment: [String: String] {
            ["HOME": root + "/home", "XDG_CONFIG_HOME": root + "/home/.config", "XDG_CONFIG_DIRS": root + "/etc",
             "XDG_DATA_HOME": root + "/home/.local/share", "XDG_DATA_DIRS": root + "/usr/share", "XDG_CURRENT_DESKTOP": "",
             "PATH": root + "/bin:/usr/bin:/bin"]
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    /// A daemon over `folders` with the test apps `apps`.
    static func daemon(_ folders: Folders, apps: [TestApp] = []) throws -> DaemonHarness {
        try DaemonHarness(apps: apps, environment: folders.environment)
    }

    @Test("explain names the desktop entry, the file and line that chose it, and why each other candidate lost; --json carries the same")
    func explainNamesTheLine() throws {
        let folders = try Folders()
        defer { folders.remove() }
        let h = try Self.daemon(folders)
        defer { h.stop() }
        let text = try h.lsctl("explain", "mailto:someone@example.org")
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "mailto:someone@example.org → mail.desktop (desktop entry, \(folders.root)/usr/share/applications/mail.desktop)", "\(text.stdout)")
        #expect(lines.contains("  decided by: ~/.config/mimeapps.list:2 [Default Applications]"), "\(text.stdout)")
        #expect(lines.contains("  desktop entries (x-scheme-handler/mailto): mail.desktop, decided by ~/.config/mimeapps.list:2 [Default Applications]"), "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("    1. thunderbird.desktop: lost: its program 'thunderbird' (Exec, line 4) is not on PATH (\(folders.root)/bin:/usr/bin:/bin)") },
                "\(text.stdout)")
        #expect(lines.contains("    2. mail.desktop: chosen (~/.config/mimeapps.list:2 [Default Applications])"), "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("    3. other.desktop: lost: comes after the chosen mail.desktop (\(folders.root)/usr/share/applications/other.desktop:5 MimeType)") },
                "\(text.stdout)")

        let json = try h.lsctl("explain", "--json", "mailto:someone@example.org")
        #expect(json.status == 0)
        #expect(json.stdout.contains(#""handlerKind" : "desktop""#), "\(json.stdout)")
        let report = try json.decode(ExplainReport.self)
        #expect(report.app == "mail.desktop" && report.reason == "onlyClaimant")
        #expect(report.claimants == ["mail.desktop", "other.desktop"])
        let desktop = try #require(report.desktop)
        #expect(desktop.decidedBy == DesktopSourceReport(file: folders.root + "/home/.config/mimeapps.list", line: 2, group: "Default Applications",
                                                        text: "~/.config/mimeapps.list:2 [Default Applications]"))
        #expect(desktop.candidates.map(\.id) == ["thunderbird.desktop", "mail.desktop", "other.desktop"])
        #expect(desktop.candidates.map(\.verdict) == ["lost", "chosen", "lost"])
        #expect(desktop.candidates.map(\.reason) == ["programNotFound", nil, "outranked"])

        // A scheme nothing handles says so, for both kinds.
        let none = try h.lsctl("explain", "gopher://x")
        #expect(none.stdout.contains("no registered app declares 'gopher' in its CFBundleURLTypes and no desktop entry can open x-scheme-handler/gopher"), "\(none.stdout)")
        #expect(none.stdout.contains("desktop entries: none lists x-scheme-handler/gopher"), "\(none.stdout)")
    }

    @Test("default with a desktop file ID changes the resolution, survives a restart, and --clear returns to the rule; a refusal says why")
    func defaultWithADesktopID() throws {
        let folders = try Folders()
        defer { folders.remove() }
        let h = try Self.daemon(folders, apps: [.test("mail", schemes: ["mailto"])])
        defer { h.stop() }
        // Registered at the start, before the desktop entries were read: the app claimed first.
        let before = try h.lsctl("explain", "--json", "mailto:x").decode(ExplainReport.self)
        #expect(before.app == "test.mail" && before.handlerKind == "native" && before.reason == "earliestRegistration")
        #expect(before.claims.map(\.app) == ["test.mail", "mail.desktop"])

        let set = try h.lsctl("default", "mailto", "other.desktop")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.hasPrefix("mailto: → other.desktop (desktop entry, \(folders.root)/usr/share/applications/other.desktop)"), "\(set.stdout)")
        #expect(set.stdout.contains("why: the user chose other.desktop for 'mailto' (lsctl default)"), "\(set.stdout)")
        let after = try h.lsctl("explain", "--json", "mailto:x").decode(ExplainReport.self)
        #expect(after.app == "other.desktop" && after.handlerKind == "desktop" && after.reason == "userDefault" && after.userDefault == "other.desktop")

        try h.restart(signal: SIGTERM)
        let restarted = try h.lsctl("explain", "--json", "mailto:x").decode(ExplainReport.self)
        #expect(restarted.app == "other.desktop" && restarted.reason == "userDefault", "the default survives a restart: \(restarted)")

        let missing = try h.lsctl("default", "mailto", "thunderbird.desktop")
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("the desktop entry thunderbird.desktop cannot open 'mailto': its program 'thunderbird' (Exec, line 4) is not on PATH"), "\(missing.stderr)")
        #expect(missing.stderr.contains("(~/.config/mimeapps.list:2 [Default Applications])"), "\(missing.stderr)")
        let unknown = try h.lsctl("default", "mailto", "nobody.desktop")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no desktop entry nobody.desktop"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("those that can: test.mail, mail.desktop, other.desktop"), "\(unknown.stderr)")
        #expect(try h.lsctl("explain", "--json", "mailto:x").decode(ExplainReport.self).app == "other.desktop", "a refused default changes nothing")

        let cleared = try h.lsctl("default", "mailto", "--clear")
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(cleared.stdout.hasPrefix("mailto: → test.mail\n"), "\(cleared.stdout)")
    }

    @Test("conflicts and schemes list apps and desktop entries; registering an app names the desktop entry that keeps its scheme")
    func conflictsListBothKinds() throws {
        let folders = try Folders()
        defer { folders.remove() }
        let h = try Self.daemon(folders, apps: [.test("mail", schemes: ["mailto"]), .test("solo")])
        defer { h.stop() }
        let conflicts = try h.lsctl("conflicts", "--json").decode([SchemeReport].self)
        #expect(conflicts.map(\.scheme) == ["mailto"], "irc and solo have one handler each: \(conflicts)")
        let mail = try #require(conflicts.first)
        #expect(mail.app == "test.mail" && mail.handlerKind == "native" && mail.claimants == ["test.mail", "mail.desktop", "other.desktop"])
        #expect(mail.desktopDecidedBy?.text == "~/.config/mimeapps.list:2 [Default Applications]")
        let text = try h.lsctl("conflicts")
        #expect(text.stdout.contains("DESKTOP CHOICE"), "\(text.stdout)")
        let row = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("mailto") }.map(String.init))
        #expect(row.contains("test.mail") && row.contains("earliestRegistration"), "\(row)")
        #expect(row.contains("mail.desktop (desktop) "), "\(row)")
        #expect(row.contains("mail.desktop by ~/.config/mimeapps.list:2 [Default Applications]; then other.desktop"), "\(row)")

        let schemes = try h.lsctl("schemes")
        let irc = try #require(schemes.stdout.split(separator: "\n").first { $0.hasPrefix("irc ") }.map(String.init), "\(schemes.stdout)")
        #expect(irc.contains("irc.desktop") && irc.contains(" desktop "), "\(irc)")
        #expect(schemes.stdout.contains("solo"), "\(schemes.stdout)")

        // A scheme desktop entries handled first stays with them; the answer says so.
        let bundle = h.root + "/elsewhere/chat.app"
        try BundleFiles.write(bundle: bundle, infoPlist: BundleFiles.infoPlist(id: "test.chat", executable: "lstestapp", schemes: ["irc"]),
                              executable: DaemonHarness.binary("lstestapp"))
        let registered = try h.lsctl("register", bundle)
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(registered.stdout.contains("'irc:' still opens with irc.desktop (a desktop entry: desktop entries handled it first, since"), "\(registered.stdout)")
        let after = try h.lsctl("conflicts", "--json").decode([SchemeReport].self)
        #expect(after.map(\.scheme) == ["irc", "mailto"])
        #expect(after.first?.app == "irc.desktop" && after.first?.handlerKind == "desktop" && after.first?.reason == "earliestRegistration")
    }

    @Test("status shows how the desktop entries were read, in text and --json")
    func statusShowsDesktopEntries() throws {
        let folders = try Folders()
        defer { folders.remove() }
        try writeFile("not a desktop entry\n", to: folders.root + "/usr/share/applications/broken.desktop")
        let h = try Self.daemon(folders)
        defer { h.stop() }
        var report: DesktopEntriesReport?
        try h.eventually("the first read is in") {
            report = try h.lsctl("status", "--json").decode(StatusReport.self).desktopEntries
            return report?.ready == true
        }
        let desktop = try #require(report)
        #expect(desktop.enabled && desktop.entries == 5 && desktop.schemesHandled == 2 && desktop.generation >= 1)
        #expect(desktop.folders == [folders.root + "/home/.config", folders.root + "/etc", folders.root + "/home/.local/share/applications",
                                    folders.root + "/usr/share/applications"])
        #expect(desktop.problems.contains { $0.contains("broken.desktop") }, "\(desktop.problems)")
        let text = try h.lsctl("status")
        #expect(text.stdout.contains("  desktop entries: 5 entries, 2 schemes handled; read "), "\(text.stdout)")
        #expect(text.stdout.contains("    folders: \(folders.root)/home/.config, "), "\(text.stdout)")
        #expect(text.stdout.contains("    problem: ") && text.stdout.contains("broken.desktop"), "\(text.stdout)")
    }

    @Test("lsopen's chooser lists apps and desktop entries, each with its kind")
    func chooserListsBothKinds() throws {
        let folders = try Folders()
        defer { folders.remove() }
        let h = try Self.daemon(folders, apps: [.test("mail", schemes: ["mailto"])])
        defer { h.stop() }
        let asked = try h.lsopenOnTerminal(answer: "", "mailto:x")
        #expect(asked.status == 73, "\(asked.stdout)")
        #expect(asked.stdout.contains("'mailto:' is claimed by 3 apps and you have chosen no default"), "\(asked.stdout)")
        #expect(asked.stdout.contains("1) test.mail  [app]  (opens it now)"), "\(asked.stdout)")
        #expect(asked.stdout.contains("2) mail.desktop  [desktop entry]"), "\(asked.stdout)")
        #expect(asked.stdout.contains("3) other.desktop  [desktop entry]"), "\(asked.stdout)")
        #expect(h.appPIDs.isEmpty, "nothing was opened")
    }
}
