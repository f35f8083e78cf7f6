import LaunchServicesCore
import Testing

/// The chosen entry for every mentioned scheme, and what moved between two reads.
@Suite("DesktopSchemeChoices: every scheme's choice, and what moved")
struct DesktopSchemeChoicesTests {
    typealias F = DesktopLayoutFixture

    func choices(_ f: F) -> DesktopSchemeChoices { DesktopSchemeChoices(DesktopHandlers(layout: f.layout())) }

    func base() -> F {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n"])
        f.data(F.dataDir, entries: ["thunderbird.desktop": F.entry(types: ["x-scheme-handler/mailto"]),
                                    "org.example.Mail.desktop": F.entry(types: ["x-scheme-handler/mailto", "x-scheme-handler/web"]),
                                    "irc.desktop": F.entry(exec: "missing %u", types: ["x-scheme-handler/irc"]),
                                    "news.desktop": F.entry(types: ["x-scheme-handler/News"])])
        return f
    }

    @Test("every mentioned scheme, lowercased, with the entry DesktopHandlers chooses; a scheme nothing can open is absent")
    func everyScheme() {
        let handlers = DesktopHandlers(layout: base().layout())
        let all = DesktopSchemeChoices(handlers)
        #expect(Set(all.chosen.keys) == ["mailto", "web"], "irc: its program is missing; News: a type is matched as written, and a URL's scheme is lowercased")
        for scheme in ["mailto", "MAILTO", "web", "Web", "irc", "gopher", "news", "News"] {
            #expect(all.chosen(forScheme: scheme) == handlers.chosen(forScheme: scheme), "\(scheme)")
        }
        #expect(all.chosen(forScheme: "Mailto")?.id == "thunderbird.desktop")
    }

    @Test("the same layout moves nothing")
    func nothingMoved() {
        #expect(choices(base()).moves(to: choices(base())).isEmpty)
    }

    @Test("a default changed in mimeapps.list: the scheme moved, named with the line that decides now")
    func defaultMoved() throws {
        var later = base()
        later.folders[0] = later.folder(.config, F.configHome, lists: ["mimeapps.list": "# mine\n[Default Applications]\nx-scheme-handler/mailto=org.example.Mail.desktop\n"], entries: [:])
        let moves = choices(base()).moves(to: choices(later))
        #expect(moves.map(\.scheme) == ["mailto"])
        let move = try #require(moves.first)
        #expect(move.before?.id == "thunderbird.desktop")
        #expect(move.after?.id == "org.example.Mail.desktop")
        #expect(move.description == "desktop handler for 'mailto' is now org.example.Mail.desktop (was thunderbird.desktop): ~/.config/mimeapps.list:3 [Default Applications]")
    }

    @Test("a scheme newly handled, one no longer handled, and the same ID from another file are moves too")
    func appearedGoneAndMovedFile() throws {
        var later = F()
        later.config(F.configHome, ["mimeapps.list": "[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n"])
        later.data(F.dataHome, entries: ["thunderbird.desktop": F.entry(types: ["x-scheme-handler/mailto"]),
                                         "gopher.desktop": F.entry(types: ["x-scheme-handler/gopher"])])
        later.data(F.dataDir, entries: ["irc.desktop": F.entry(exec: "missing %u", types: ["x-scheme-handler/irc"])])
        let moves = choices(base()).moves(to: choices(later))
        #expect(moves.map(\.scheme) == ["gopher", "mailto", "web"])
        #expect(moves[0].description == "desktop handler for 'gopher' is now gopher.desktop (was none): ~/.local/share/applications/gopher.desktop:5 MimeType")
        #expect(moves[1].description == "desktop handler for 'mailto' is now thunderbird.desktop from ~/.local/share/applications/thunderbird.desktop (was from /usr/share/applications/thunderbird.desktop): ~/.config/mimeapps.list:2 [Default Applications]")
        #expect(moves[2].description == "desktop handler for 'web' is now none (was org.example.Mail.desktop)")
    }

    @Test("a scheme and an ID with control characters are shown escaped")
    func escaped() {
        let candidate = DesktopCandidate(id: "a\u{1b}.desktop", source: DesktopSource(kind: .mimeType, file: "/x/a.desktop", line: 3), verdict: .chosen)
        let move = DesktopHandlerMove(scheme: "we\u{7}b", before: nil, after: candidate)
        #expect(move.description == "desktop handler for 'we\\x07b' is now a\\x1B.desktop (was none): /x/a.desktop:3 MimeType")
    }
}
