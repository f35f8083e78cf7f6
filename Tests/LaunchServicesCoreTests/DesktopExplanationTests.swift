import LaunchServicesCore
import Testing

/// The explanation `lsctl explain` shows: the deciding file and line, every candidate and why
/// it won or lost, what GLib would choose when it differs, and the notes — exact texts.
@Suite("DesktopChoice: the explanation, to the line")
struct DesktopExplanationTests {
    typealias F = DesktopLayoutFixture

    @Test("a full explanation: decided by a default line; missing, uninstalled, removed, outranked and shadowed candidates")
    func full() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": """
            [Default Applications]
            x-scheme-handler/mailto=gone.desktop;thunderbird.desktop;org.example.Mail.desktop

            [Removed Associations]
            x-scheme-handler/mailto=evolution.desktop
            """])
        f.data(F.dataHome, entries: ["org.example.Mail.desktop": F.entry(types: ["x-scheme-handler/mailto"]),
                                     "mutt.desktop": F.entry(types: [])])
        f.data(F.dataDir, lists: ["mimeapps.list": "[Added Associations]\nx-scheme-handler/mailto=mutt.desktop\n"],
               entries: ["thunderbird.desktop": F.entry(exec: "thunderbird %u", types: ["x-scheme-handler/mailto"]),
                         "evolution.desktop": F.entry(types: ["x-scheme-handler/mailto"]),
                         "aerc.desktop": F.entry(types: ["x-scheme-handler/mailto"])])
        #expect(f.choice("mailto").explanation == [
            "x-scheme-handler/mailto: org.example.Mail.desktop (~/.local/share/applications/org.example.Mail.desktop)",
            "  decided by ~/.config/mimeapps.list:2 [Default Applications]",
            "  1. gone.desktop: lost: no data folder has this desktop file (~/.config/mimeapps.list:2 [Default Applications])",
            "  2. thunderbird.desktop: lost: its program 'thunderbird' (Exec, line 4) is not on PATH (/usr/bin:/bin) (~/.config/mimeapps.list:2 [Default Applications])",
            "  3. org.example.Mail.desktop: chosen (~/.config/mimeapps.list:2 [Default Applications])",
            "  4. aerc.desktop: lost: comes after the chosen org.example.Mail.desktop (/usr/share/applications/aerc.desktop:5 MimeType)",
            "  5. evolution.desktop: lost: removed in ~/.config/mimeapps.list:5 [Removed Associations] (/usr/share/applications/evolution.desktop:5 MimeType)",
            "  6. mutt.desktop: lost: its ID belongs to ~/.local/share/applications/mutt.desktop, in an earlier folder, which is not associated with the type (/usr/share/applications/mimeapps.list:2 [Added Associations])",
        ])
    }

    @Test("when GLib would choose otherwise, the explanation says what and why; GLib's spec departures are noted")
    func glibDifference() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\nx-scheme-handler/web=hidden.desktop;b.desktop\n"])
        f.data(F.dataHome, entries: ["b.desktop": F.entry(exec: "missing %u")])
        f.data(F.dataDir, entries: ["hidden.desktop": F.entry("Hidden=true"), "b.desktop": F.entry()])
        #expect(f.choice().explanation == [
            "x-scheme-handler/web: b.desktop (/usr/share/applications/b.desktop)",
            "  decided by ~/.config/mimeapps.list:2 [Default Applications]",
            "  1. hidden.desktop: lost: Hidden=true (line 6): the entry is deleted (~/.config/mimeapps.list:2 [Default Applications])",
            "  2. b.desktop: chosen (~/.config/mimeapps.list:2 [Default Applications]); skipped ~/.local/share/applications/b.desktop: its program 'missing' (Exec, line 4) is not on PATH (/usr/bin:/bin)",
            "  GLib 2.74 (gio open) would choose hidden.desktop: a Hidden=true entry is no handler (the Desktop Entry spec: hidden means deleted); GLib 2.74 still chooses one a mimeapps.list names",
            "  note: ~/.local/share/applications/b.desktop cannot be loaded, so GLib uses /usr/share/applications/b.desktop for b.desktop (the Desktop Entry spec gives the ID to the first folder)",
        ])
    }

    @Test("a source names its file and line, with the group or MimeType; control characters in names are escaped")
    func sources() {
        #expect(DesktopSource(kind: .addedAssociations, file: "/etc/xdg/mimeapps.list", line: 3).description == "/etc/xdg/mimeapps.list:3 [Added Associations]")
        #expect(DesktopSource(kind: .mimeCache, file: "/usr/share/applications/mimeinfo.cache", line: 9).description
                    == "/usr/share/applications/mimeinfo.cache:9 [MIME Cache]")
        #expect(DesktopSource(kind: .mimeType, file: "/a/b\nc.desktop", line: 5).description == "/a/b\\nc.desktop:5 MimeType")
        #expect(DesktopCandidate(id: "x\u{1B}.desktop", source: DesktopSource(kind: .mimeType, file: "/f", line: 1), verdict: .chosen).description
                    == "x\\x1B.desktop: chosen (/f:1 MimeType)")
    }

    @Test("the deviations and spec differences by name and reason")
    func names() {
        #expect([LossReason.noSuchEntry, .removed(by: DesktopSource(kind: .removedAssociations, file: "/f", line: 1)), .outranked(by: "a"),
                 .shadowed(by: "/f"), .defect(.hidden(line: 2)), .defect(.programNotFound(program: "p", key: "Exec", line: 1, searchPath: ""))].map(\.name)
                    == ["noSuchEntry", "removed", "outranked", "shadowed", "hidden", "programNotFound"])
        #expect(DesktopDeviation.allCases.map(\.rawValue) == ["hiddenIsNoHandler", "ownExportNeverChosen", "mimeTypeFromEntries",
                                                              "nothingToRunIsNoHandler", "sameFolderRemovalApplies"])
        #expect(SpecDifference.defaultNotAssociated(id: "a.desktop").description
                    == "a.desktop is a default without being associated with the type: GLib chooses it (the mime-apps spec 1.0.1 would not)")
        #expect(SpecDifference.defaultsList(path: "/usr/share/applications/defaults.list").description
                    == "decided by /usr/share/applications/defaults.list, a defaults.list: no spec defines it, GLib reads it")
        #expect(GLibDifference(glibChoice: nil, deviations: [.mimeTypeFromEntries]).description
                    == "GLib 2.74 (gio open) would choose nothing: an entry's own MimeType decides (the Desktop Entry spec); GLib 2.74 reads MimeType only through the folder's mimeinfo.cache, which may be missing or out of date")
    }
}
