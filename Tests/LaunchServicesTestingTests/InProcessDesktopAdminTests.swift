import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// The administration of desktop-entry handlers, in the in-process daemon with real desktop
/// entries in private XDG folders: `explain` names the kind that won, the rule, and the file
/// and line that chose among desktop entries; `default` takes a usable desktop entry and
/// refuses any other naming why; `schemes` and `conflicts` list both kinds; `status` says how
/// the desktop entries were read.
@Suite struct InProcessDesktopAdminTests {
    typealias Kit = InProcessDesktopEntriesTests

    /// `mailto`: mail.desktop (chosen by ~/.config/mimeapps.list line 2), other.desktop (ranked
    /// after it), thunderbird.desktop (its program is not on PATH), removed.desktop (removed by
    /// ~/.config/mimeapps.list line 4); `irc`: irc.desktop only.
    static func layout(_ root: String) throws -> [String: String] {
        let environment = try Kit.environment(root)
        let applications = root + "/usr/share/applications"
        try writeFile(Kit.entry("mailto"), to: applications + "/mail.desktop")
        try writeFile(Kit.entry("mailto"), to: applications + "/other.desktop")
        try writeFile("[Desktop Entry]\nType=Application\nName=t\nExec=thunderbird %u\nMimeType=x-scheme-handler/mailto;\n", to: applications + "/thunderbird.desktop")
        try writeFile(Kit.entry("mailto"), to: applications + "/removed.desktop")
        try writeFile(Kit.entry("irc"), to: applications + "/irc.desktop")
        try writeFile("[Desktop Entry]\nType=Application\nName=n\nExec=prog %u\nMimeType=text/plain;\n", to: applications + "/notes.desktop")
        try writeFile("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop;mail.desktop;\n[Removed Associations]\nx-scheme-handler/mailto=removed.desktop;\n",
                      to: root + "/home/.config/mimeapps.list")
        return environment
    }

    static func command<Report: Decodable>(_ client: InProcessClient, _ command: AdminCommand, as report: Report.Type) throws -> Report {
        let answer = client.answer(to: client.send(command.message))
        guard case .queryResult(let json)? = answer else { throw ProcessError("\(command.verb) was answered \(String(describing: answer))") }
        return try JSONDecoder().decode(report, from: Data(json.utf8))
    }

    static func query<Report: Decodable>(_ client: InProcessClient, _ query: AdminQuery, as report: Report.Type) throws -> Report {
        let answer = client.answer(to: client.send(query.message))
        guard case .queryResult(let json)? = answer else { throw ProcessError("\(query.topic) was answered \(String(describing: answer))") }
        return try JSONDecoder().decode(report, from: Data(json.utf8))
    }

    static func refusal(_ client: InProcessClient, _ command: AdminCommand) -> OpenError? {
        guard case .failure(let error)? = client.answer(to: client.send(command.message)) else { return nil }
        return error
    }

    @Test func explainNamesTheDesktopEntryTheLineThatChoseItAndWhyEachOtherLost() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            let daemon = Kit.daemon(try Self.layout(root))
            // Asked before the first read is in (the loop has not run since the start, and
            // the hello and the request are taken in as they arrive): answered once it is.
            let client = daemon.connect(greet: false)
            client.sendRaw(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "early")))
            #expect(!daemon.desktopEntries.isReady)
            let report = try Self.command(client, .explain(url: "mailto:a@example.org"), as: ExplainReport.self)
            #expect(report.app == "mail.desktop")
            #expect(report.handlerKind == "desktop")
            #expect(report.kind == nil, "kind is the CFBundleURLName of a native app")
            #expect(report.reason == "onlyClaimant")
            #expect(report.why.contains("mail.desktop is the desktop entry chosen for x-scheme-handler/mailto by ~/.config/mimeapps.list:2 [Default Applications]"), "\(report.why)")
            #expect(report.claimants == ["mail.desktop", "other.desktop"])
            #expect(report.desktopClaimants == ["mail.desktop", "other.desktop"])
            #expect(report.claims.map(\.app) == ["mail.desktop"] && report.claims.first?.handlerKind == "desktop")
            let desktop = try #require(report.desktop)
            #expect(desktop.mimeType == "x-scheme-handler/mailto")
            #expect(desktop.chosen == "mail.desktop")
            #expect(desktop.decidedBy == DesktopSourceReport(file: root + "/home/.config/mimeapps.list", line: 2, group: "Default Applications",
                                                            text: "~/.config/mimeapps.list:2 [Default Applications]"))
            let byID = Dictionary(desktop.candidates.map { ($0.id, $0) }) { first, _ in first }
            #expect(byID["mail.desktop"]?.verdict == "chosen")
            #expect(byID["mail.desktop"]?.file == root + "/usr/share/applications/mail.desktop")
            let thunderbird = try #require(byID["thunderbird.desktop"])
            #expect(thunderbird.verdict == "lost" && thunderbird.reason == "programNotFound")
            #expect(thunderbird.reasonText?.contains("its program 'thunderbird' (Exec, line 4) is not on PATH") == true, "\(String(describing: thunderbird.reasonText))")
            #expect(thunderbird.source.text == "~/.config/mimeapps.list:2 [Default Applications]")
            #expect(byID["removed.desktop"]?.reason == "removed")
            #expect(byID["removed.desktop"]?.reasonText == "removed in ~/.config/mimeapps.list:4 [Removed Associations]")
            #expect(byID["other.desktop"]?.reason == "outranked")
            #expect(byID["other.desktop"]?.reasonText == "comes after the chosen mail.desktop")
            #expect(byID["notes.desktop"] == nil, "an entry for another type is no candidate")
        }
    }

    @Test func theEarlierClaimWinsAcrossKindsAndExplainSaysWhich() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            // The app is registered before the first read: it claimed mailto first.
            let daemon = Kit.daemon(try Self.layout(root), apps: [.simulated("com.example.mail", schemes: ["mailto"])])
            let client = daemon.connect()
            let mail = try Self.command(client, .explain(url: "mailto:a@example.org"), as: ExplainReport.self)
            #expect(mail.app == "com.example.mail" && mail.handlerKind == "native" && mail.reason == "earliestRegistration")
            #expect(mail.claims.map(\.app) == ["com.example.mail", "mail.desktop"])
            #expect(mail.claims.map(\.handlerKind) == [nil, "desktop"])
            #expect(mail.claimants == ["com.example.mail", "mail.desktop", "other.desktop"])
            #expect(mail.why.contains("com.example.mail was registered first"), "\(mail.why)")
            #expect(mail.why.contains("before desktop entries first handled it"), "\(mail.why)")
            #expect(mail.desktop?.chosen == "mail.desktop", "the desktop side's choice is explained although it lost")

            // irc was handled by a desktop entry first: an app registered later does not take it.
            daemon.advance(by: .seconds(1))
            daemon.register(.simulated("com.example.chat", schemes: ["irc"]))
            let irc = try Self.command(client, .explain(url: "irc://net/room"), as: ExplainReport.self)
            #expect(irc.app == "irc.desktop" && irc.handlerKind == "desktop" && irc.reason == "earliestRegistration")
            #expect(irc.claims.map(\.app) == ["irc.desktop", "com.example.chat"])
            #expect(irc.why.contains("desktop entries handled it first"), "\(irc.why)")
            #expect(irc.why.contains("before com.example.chat was registered"), "\(irc.why)")
            #expect(irc.why.contains("chosen by \(root)/usr/share/applications/irc.desktop:5 MimeType"), "\(irc.why)")
        }
    }

    @Test func aDefaultMayNameAUsableDesktopEntryAndIsRefusedForAnyOtherWithTheReason() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            try writeFile("[Desktop Entry]\nType=Application\nName=h\nExec=prog %u\nHidden=true\nMimeType=x-scheme-handler/mailto;\n",
                          to: root + "/usr/share/applications/hidden.desktop")
            let daemon = Kit.daemon(try Self.layout(root), apps: [.simulated("com.example.mail", schemes: ["mailto"])])
            let client = daemon.connect()
            // Ranked after the chosen one, it is usable: accepted, and it opens the scheme now.
            let chosen = try Self.command(client, .setDefault(scheme: "mailto", app: "other.desktop"), as: ExplainReport.self)
            #expect(chosen.app == "other.desktop" && chosen.handlerKind == "desktop" && chosen.reason == "userDefault")
            #expect(chosen.userDefault == "other.desktop")
            #expect(chosen.why == "the user chose other.desktop for 'mailto' (lsctl default)")
            #expect(try Self.command(client, .explain(url: "mailto:x"), as: ExplainReport.self).app == "other.desktop")

            let missing = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "thunderbird.desktop")))
            #expect(missing.code == .invalidRequest)
            #expect(missing.message.contains("the desktop entry thunderbird.desktop cannot open 'mailto': its program 'thunderbird' (Exec, line 4) is not on PATH"), "\(missing.message)")
            #expect(missing.message.contains("(~/.config/mimeapps.list:2 [Default Applications])"), "\(missing.message)")
            let hidden = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "hidden.desktop")))
            #expect(hidden.message.contains("the desktop entry hidden.desktop (\(root)/usr/share/applications/hidden.desktop) cannot open 'mailto': Hidden=true (line 5)"), "\(hidden.message)")
            let removed = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "removed.desktop")))
            #expect(removed.message.contains("the desktop entry removed.desktop cannot open 'mailto': removed in ~/.config/mimeapps.list:4 [Removed Associations]"), "\(removed.message)")
            let unknown = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "nobody.desktop")))
            #expect(unknown.message.contains("no desktop entry nobody.desktop"), "\(unknown.message)")
            #expect(unknown.message.contains("those that can: com.example.mail, mail.desktop, other.desktop"), "\(unknown.message)")
            let otherType = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "notes.desktop")))
            #expect(otherType.message.contains("the desktop entry notes.desktop (\(root)/usr/share/applications/notes.desktop) does not handle x-scheme-handler/mailto"),
                    "\(otherType.message)")
            let otherScheme = try #require(Self.refusal(client, .setDefault(scheme: "irc", app: "mail.desktop")))
            #expect(otherScheme.message.contains("does not handle x-scheme-handler/irc"), "\(otherScheme.message)")
            let noApp = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "com.example.nobody")))
            #expect(noApp.message.hasPrefix("no app with bundle id 'com.example.nobody' is registered"), "\(noApp.message)")
            #expect(try Self.command(client, .explain(url: "mailto:x"), as: ExplainReport.self).userDefault == "other.desktop", "a refusal changes nothing")

            // The native app can be the default again, and --clear returns to the rule.
            #expect(try Self.command(client, .setDefault(scheme: "mailto", app: "com.example.mail"), as: ExplainReport.self).app == "com.example.mail")
            #expect(try Self.command(client, .setDefault(scheme: "mailto", app: "mail.desktop"), as: ExplainReport.self).app == "mail.desktop")
            let cleared = try Self.command(client, .clearDefault(scheme: "mailto"), as: ExplainReport.self)
            #expect(cleared.userDefault == nil && cleared.app == "com.example.mail" && cleared.reason == "earliestRegistration")
        }
    }

    @Test func aDesktopDefaultThatIsNoLongerUsableIsIgnoredAndExplainSaysWhy() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            let daemon = Kit.daemon(try Self.layout(root))
            let client = daemon.connect()
            #expect(try Self.command(client, .setDefault(scheme: "mailto", app: "other.desktop"), as: ExplainReport.self).app == "other.desktop")
            try writeFile("[Desktop Entry]\nType=Application\nName=x\nExec=gone %u\nMimeType=x-scheme-handler/mailto;\n", to: root + "/usr/share/applications/other.desktop")
            daemon.desktopFoldersChanged()
            daemon.advance(by: .milliseconds(200))
            let report = try Self.command(client, .explain(url: "mailto:x"), as: ExplainReport.self)
            #expect(report.app == "mail.desktop" && report.reason == "onlyClaimant")
            #expect(report.userDefault == "other.desktop")
            let lost = report.desktop?.candidates.first { $0.id == "other.desktop" }
            #expect(lost?.reason == "programNotFound")
        }
    }

    @Test func schemesAndConflictsListBothKinds() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            let environment = try Self.layout(root)
            try writeFile(Kit.entry("gopher"), to: root + "/usr/share/applications/gopher.desktop")
            let daemon = Kit.daemon(environment, apps: [.simulated("com.example.mail", schemes: ["mailto"]), .simulated("com.example.notes", schemes: ["notes"])])
            let client = daemon.connect()
            let schemes = try Self.query(client, .schemes, as: [SchemeReport].self)
            #expect(schemes.map(\.scheme) == ["gopher", "irc", "mailto", "notes"])
            let gopher = try #require(schemes.first { $0.scheme == "gopher" })
            #expect(gopher.app == "gopher.desktop" && gopher.handlerKind == "desktop" && gopher.claimants == ["gopher.desktop"])
            #expect(gopher.desktopDecidedBy?.text == "\(root)/usr/share/applications/gopher.desktop:5 MimeType")
            let notes = try #require(schemes.first { $0.scheme == "notes" })
            #expect(notes.handlerKind == "native" && notes.desktopClaimants.isEmpty && notes.desktopDecidedBy == nil)

            let conflicts = try Self.query(client, .conflicts, as: [SchemeReport].self)
            #expect(conflicts.map(\.scheme) == ["mailto"], "one handler each for gopher, irc and notes")
            let mail = try #require(conflicts.first)
            #expect(mail.app == "com.example.mail" && mail.handlerKind == "native" && mail.reason == "earliestRegistration")
            #expect(mail.claimants == ["com.example.mail", "mail.desktop", "other.desktop"])
            #expect(mail.desktopClaimants == ["mail.desktop", "other.desktop"])
            #expect(mail.claims.map(\.app) == ["com.example.mail", "mail.desktop"])
            #expect(mail.desktopDecidedBy?.text == "~/.config/mimeapps.list:2 [Default Applications]")

            // Two usable desktop entries and no app: a conflict too.
            daemon.shutdown()
            let desktopOnly = Kit.daemon(environment)
            let rows = try Self.query(desktopOnly.connect(), .conflicts, as: [SchemeReport].self)
            #expect(rows.map(\.scheme) == ["mailto"])
            #expect(rows.first?.app == "mail.desktop" && rows.first?.reason == "onlyClaimant" && rows.first?.handlerKind == "desktop")
        }
    }

    @Test func registeringAnAppNamesTheDesktopEntryThatKeepsItsScheme() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            let environment = try Self.layout(root)
            let daemon = Kit.daemon(environment)
            daemon.settle()
            daemon.advance(by: .seconds(1))
            daemon.register(.simulated("com.example.chat", schemes: ["irc"]))
            let client = daemon.connect()
            let irc = try #require(try Self.query(client, .schemes, as: [SchemeReport].self).first { $0.scheme == "irc" })
            #expect(irc.app == "irc.desktop" && irc.claimants == ["com.example.chat", "irc.desktop"])
        }
    }

    @Test func statusSaysHowTheDesktopEntriesWereRead() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            try writeFile("not a desktop entry\n", to: root + "/usr/share/applications/broken.desktop")
            let daemon = Kit.daemon(try Self.layout(root), apps: [.simulated("com.example.notes", schemes: ["notes"])])
            let client = daemon.connect()
            daemon.settle()
            let status = try Self.query(client, .status, as: StatusReport.self)
            let desktop = try #require(status.desktopEntries)
            #expect(desktop.enabled && desktop.ready && desktop.generation == 1)
            #expect(desktop.entries == 7)
            #expect(desktop.schemesHandled == 2)
            #expect(desktop.folders == [root + "/home/.config", root + "/etc", root + "/home/.local/share/applications", root + "/usr/share/applications"])
            #expect(desktop.lastRead == "2023-11-14T22:13:20.000Z")
            #expect(desktop.problems.contains { $0.contains("broken.desktop") }, "\(desktop.problems)")

            // Off: said so, nothing read.
            let off = InProcessDaemon(desktopEnvironment: try Kit.environment(root))
            let offStatus = try #require(try Self.query(off.connect(), .status, as: StatusReport.self).desktopEntries)
            #expect(!offStatus.enabled && offStatus.entries == 0 && offStatus.folders.isEmpty)
        }
    }

    @Test func anAppLearnsTheHandlerButNoDesktopFiles() throws {
        try TemporaryFolder.with(prefix: "ls-kit-admin") { root in
            let daemon = Kit.daemon(try Self.layout(root), apps: [.simulated("com.example.notes", schemes: ["notes"], queries: ["mailto"])])
            #expect(daemon.connect().open("notes://today")?.opened == true)
            let pid = try #require(daemon.app("com.example.notes")?.pid)
            let app = daemon.connect(pid: pid)
            let report = try Self.command(app, .explain(url: "mailto:x"), as: ExplainReport.self)
            #expect(report.app == "mail.desktop" && report.handlerKind == "desktop")
            #expect(report.desktop == nil, "no paths of the user's files for an app")
            let rows = try Self.query(app, .schemes, as: [SchemeReport].self)
            #expect(rows.map(\.scheme) == ["mailto", "notes"])
            #expect(rows.allSatisfy { $0.desktopDecidedBy == nil })
            #expect(try Self.query(app, .status, as: StatusReport.self).desktopEntries == nil)
        }
    }

    @Test func withDesktopEntriesOffADesktopDefaultIsRefusedSayingSo() throws {
        let daemon = InProcessDaemon(apps: [.simulated("com.example.mail", schemes: ["mailto"])])
        let client = daemon.connect()
        let refused = try #require(Self.refusal(client, .setDefault(scheme: "mailto", app: "mail.desktop")))
        #expect(refused.code == .invalidRequest)
        #expect(refused.message.contains("desktop entries are not read (desktopEntries.enabled is false)"), "\(refused.message)")
        let report = try Self.command(client, .explain(url: "mailto:x"), as: ExplainReport.self)
        #expect(report.app == "com.example.mail" && report.handlerKind == "native" && report.desktop == nil && report.desktopClaimants.isEmpty)
    }
}
