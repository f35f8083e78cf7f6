import LaunchServicesCore
import Testing

/// Each rule of the choice, on hand-written layouts, under GLib 2.74's rules and this
/// daemon's (which differ only by the named deviations).
@Suite("DesktopHandlers: each rule of GLib's choice")
struct DesktopChoiceTests {
    typealias F = DesktopLayoutFixture
    let web = "x-scheme-handler/web"

    @Test("[Default Applications] names the default, over entries that merely declare the type")
    func defaultWins() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=b.desktop\n"])
        f.data(F.dataDir, entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(f.chosen() == ("b.desktop", "b.desktop"))
        #expect(f.choice().chosen?.source.description == "~/.config/mimeapps.list:2 [Default Applications]")
    }

    @Test("an uninstalled or missing default falls through to the next in its list, then to the next file's defaults")
    func defaultsFallThrough() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=gone.desktop;broken.desktop\n"])
        f.config(F.configDir, ["mimeapps.list": "[Default Applications]\n\(web)=b.desktop\n"])
        f.data(F.dataDir, entries: ["a.desktop": F.entry(), "b.desktop": F.entry(), "broken.desktop": F.entry(exec: "missing-prog %u")])
        #expect(f.chosen() == ("b.desktop", "b.desktop"))
        let candidates = f.choice().candidates
        #expect(candidates.map(\.id) == ["gone.desktop", "broken.desktop", "b.desktop", "a.desktop"])
        #expect(candidates[0].verdict == .lost(.noSuchEntry))
        #expect(candidates[1].verdict == .lost(.defect(.programNotFound(program: "missing-prog", key: "Exec", line: 4, searchPath: "/usr/bin:/bin"))))
        #expect(candidates[3].verdict == .lost(.outranked(by: "b.desktop")))
    }

    @Test("every folder's defaults come before any association, whatever the folder")
    func defaultsBeforeAssociations() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Added Associations]\n\(web)=a.desktop\n"])
        f.data(F.dataDir, lists: ["mimeapps.list": "[Default Applications]\n\(web)=b.desktop\n"],
               entries: ["a.desktop": F.entry(), "b.desktop": F.entry(types: [])])
        #expect(f.chosen() == ("b.desktop", "b.desktop"))
        #expect(f.choice().specDifferences == [.defaultNotAssociated(id: "b.desktop")], "b declares nothing: GLib still takes the default")
    }

    @Test("in a folder, each current desktop's list before mimeapps.list; another desktop's list is not read")
    func desktopSpecific() {
        var f = F()
        f.desktops = ["ubuntu", "gnome"]
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=a.desktop\n",
                                "gnome-mimeapps.list": "[Default Applications]\n\(web)=b.desktop\n",
                                "kde-mimeapps.list": "[Default Applications]\n\(web)=c.desktop\n"])
        f.data(F.dataDir, entries: ["a.desktop": F.entry(), "b.desktop": F.entry(), "c.desktop": F.entry()])
        #expect(f.chosen() == ("b.desktop", "b.desktop"))
        #expect(!f.choice().candidates.contains { $0.source.file.hasSuffix("kde-mimeapps.list") })
    }

    @Test("[Added]/[Removed Associations] in a desktop-specific list or defaults.list are ignored, with a note")
    func notPermitted() {
        var f = F()
        f.desktops = ["gnome"]
        f.config(F.configHome, ["gnome-mimeapps.list": "[Added Associations]\n\(web)=b.desktop\n"])
        f.data(F.dataDir, lists: ["defaults.list": "[Removed Associations]\n\(web)=a.desktop\n"],
               entries: ["a.desktop": F.entry(), "b.desktop": F.entry(types: [])])
        #expect(f.chosen() == ("a.desktop", "a.desktop"))
        #expect(f.choice().notes == [
            "~/.config/gnome-mimeapps.list:2 [Added Associations] ignored: only mimeapps.list may add or remove associations",
            "/usr/share/applications/defaults.list:2 [Removed Associations] ignored: only mimeapps.list may add or remove associations",
        ])
    }

    @Test("associations: [Added Associations] in its order, then the folder's entries by ID in byte order (the cache's)")
    func associationOrder() {
        var f = F()
        f.data(F.dataHome, lists: ["mimeapps.list": "[Added Associations]\n\(web)=z.desktop;m.desktop\n"],
               entries: ["z.desktop": F.entry(types: []), "m.desktop": F.entry(exec: "nope"), "b.desktop": F.entry(), "B.desktop": F.entry()])
        f.data(F.dataDir, entries: ["a.desktop": F.entry()])
        let order = ["z.desktop", "m.desktop", "B.desktop", "b.desktop", "a.desktop"]
        #expect(f.choice(rules: .glib).candidates.map(\.id) == order)
        #expect(f.choice().candidates.map(\.id) == order)
        #expect(f.chosen() == ("z.desktop", "z.desktop"))
        #expect(f.choice().candidates[2].source.kind == .mimeType)
        #expect(f.choice(rules: .glib).candidates[2].source.kind == .mimeCache)
    }

    @Test("a removal reaches later folders, not earlier ones; a default is never removed")
    func removals() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Removed Associations]\n\(web)=a.desktop;c.desktop\n"])
        f.data(F.dataHome, entries: ["c.desktop": F.entry(exec: nil, types: [], "DBusActivatable=true")])
        f.data(F.dataDir, lists: ["mimeapps.list": "[Default Applications]\n\(web)=x.desktop\n[Added Associations]\n\(web)=c.desktop\n"],
               entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(f.chosen() == ("b.desktop", "b.desktop"))
        let candidates = f.choice().candidates
        #expect(candidates.map(\.id) == ["x.desktop", "b.desktop", "a.desktop", "c.desktop"])
        #expect(candidates[2].verdict == .lost(.removed(by: DesktopSource(kind: .removedAssociations, file: "/home/u/.config/mimeapps.list",
                                                                            shownFile: "~/.config/mimeapps.list", line: 2))))
        // c.desktop is owned by the data home, before the folder that adds it: the addition does not reach it.
        #expect(candidates[3].verdict == .lost(.shadowed(by: "~/.local/share/applications/c.desktop")))
        var g = F()
        g.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=a.desktop\n[Removed Associations]\n\(web)=a.desktop\n"])
        g.data(F.dataDir, entries: ["a.desktop": F.entry()])
        #expect(g.chosen() == ("a.desktop", "a.desktop"), "a default stays a default when removed")
        #expect(g.choice().specDifferences == [.defaultNotAssociated(id: "a.desktop")])
    }

    @Test("an association from a later folder does not reach an ID an earlier folder owns")
    func masking() {
        var f = F()
        f.data(F.dataHome, entries: ["a.desktop": F.entry(types: [])])
        f.data(F.dataDir, lists: ["mimeapps.list": "[Added Associations]\n\(web)=a.desktop\n"], entries: ["a.desktop": F.entry()])
        #expect(f.chosen() == (nil, nil))
        #expect(f.choice().candidates.map(\.verdict) == [.lost(.shadowed(by: "~/.local/share/applications/a.desktop"))])
    }

    @Test("a same-folder removal: GLib applies it only when the folder's mimeapps.list also adds for the type; here always")
    func sameFolderRemoval() {
        var f = F()
        f.data(F.dataHome, lists: ["mimeapps.list": "[Removed Associations]\n\(web)=a.desktop\n"], entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(f.chosen() == ("a.desktop", "b.desktop"))
        #expect(f.choice().glibDifference == GLibDifference(glibChoice: "a.desktop", deviations: [.sameFolderRemovalApplies]))
        var g = F()
        g.data(F.dataHome, lists: ["mimeapps.list": "[Added Associations]\n\(web)=c.desktop\n[Removed Associations]\n\(web)=a.desktop\n"],
               entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(g.chosen() == ("b.desktop", "b.desktop"))
    }

    @Test("an ID whose first file cannot load is taken from a later folder's file (GLib), noted as a spec difference")
    func fallThrough() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=a.desktop\n"])
        f.data(F.dataHome, entries: ["a.desktop": F.entry(exec: "missing-prog %u")])
        f.data(F.dataDir, entries: ["a.desktop": F.entry()])
        #expect(f.chosen() == ("a.desktop", "a.desktop"))
        let chosen = f.choice().chosen
        #expect(chosen?.entry?.path == "/usr/share/applications/a.desktop")
        #expect(chosen?.skipped.map(\.file) == ["~/.local/share/applications/a.desktop"])
        #expect(f.choice().specDifferences == [.fellThrough(id: "a.desktop", from: "~/.local/share/applications/a.desktop", to: "/usr/share/applications/a.desktop")])
    }

    @Test("Hidden: GLib still chooses a hidden entry a list names; here it is deleted, and the ID with it")
    func hidden() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=a.desktop;b.desktop\n"])
        f.data(F.dataHome, entries: ["a.desktop": F.entry(types: [], "Hidden=true")])
        f.data(F.dataDir, entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(f.chosen() == ("a.desktop", "b.desktop"))
        #expect(f.choice().candidates[0].verdict == .lost(.defect(.hidden(line: 6))))
        #expect(f.choice().glibDifference?.deviations == [.hiddenIsNoHandler])
        var g = F()
        g.data(F.dataDir, entries: ["a.desktop": F.entry("Hidden=True"), "b.desktop": F.entry()])
        #expect(g.chosen() == ("a.desktop", "a.desktop"), "Hidden=True is no boolean to GLib: not hidden")
    }

    @Test("an Application with no Exec: GLib chooses it; here it is no handler, unless D-Bus activatable")
    func nothingToRun() {
        var f = F()
        f.data(F.dataDir, entries: ["a.desktop": F.entry(exec: nil), "b.desktop": F.entry(exec: ""), "c.desktop": F.entry()])
        #expect(f.chosen() == ("a.desktop", "c.desktop"))
        var g = F()
        g.data(F.dataDir, entries: ["a.desktop": F.entry(exec: nil, "DBusActivatable=true"), "c.desktop": F.entry()])
        #expect(g.chosen() == ("a.desktop", "a.desktop"))
    }

    @Test("the entry lsctl export-xdg writes, or any entry running lsopen, is never chosen here")
    func ownExport() {
        var f = F()
        f.installed.insert("/opt/ls/bin/lsopen")
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=swift-launch-services-lsopen.desktop;wrapper.desktop\n"])
        f.data(F.dataHome, entries: ["swift-launch-services-lsopen.desktop": F.entry(exec: "/opt/ls/bin/lsopen %u"),
                                     "wrapper.desktop": F.entry(exec: "'/opt/ls/bin/lsopen' %u"), "a.desktop": F.entry()])
        #expect(f.chosen() == ("swift-launch-services-lsopen.desktop", "a.desktop"))
        #expect(f.choice().candidates.prefix(2).map(\.verdict) == [.lost(.defect(.ownExport)), .lost(.defect(.ownExport))])
    }

    @Test("today's export (the bus name's file, DBusActivatable) and an earlier one left behind: neither is chosen")
    func ownExportByBusName() {
        var f = F()
        f.installed.insert("/opt/ls/bin/lsopen")
        let current = DesktopEntryCheck.exportedEntryID
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=\(current);swift-launch-services-lsopen.desktop;a.desktop\n"])
        f.data(F.dataHome, entries: [current: F.entry(exec: "/opt/ls/bin/lsopen %u", "DBusActivatable=true"),
                                     "swift-launch-services-lsopen.desktop": F.entry(exec: "/opt/ls/bin/lsopen %u"), "a.desktop": F.entry()])
        #expect(f.chosen() == (current, "a.desktop"))
        #expect(f.choice().candidates.prefix(2).map(\.verdict) == [.lost(.defect(.ownExport)), .lost(.defect(.ownExport))])
    }

    @Test("MimeType: GLib reads it through the folder's cache, here from the entry itself")
    func cacheOrEntries() {
        var stale = F()
        stale.data(F.dataDir, lists: ["mimeinfo.cache": "[MIME Cache]\n\(web)=gone.desktop;old.desktop;\n"],
                   entries: ["old.desktop": F.entry(types: []), "new.desktop": F.entry()])
        #expect(stale.chosen() == ("old.desktop", "new.desktop"))
        #expect(stale.choice().glibDifference?.deviations == [.mimeTypeFromEntries])
        var none = F()
        none.data(F.dataDir, entries: ["a.desktop": F.entry()], cache: false)
        #expect(none.chosen() == (nil, "a.desktop"))
    }

    @Test("what GLib loads: Type=Application exactly, [Desktop Entry] first, TryExec and Exec both found, Exec that splits")
    func loading() {
        let cases: [(String, EntryDefect?)] = [
            ("[Desktop Entry]\nType=Link\nExec=prog\nMimeType=\(web);\n", .notApplication(type: "Link", line: 2)),
            ("[Desktop Entry]\nType=Application \nExec=prog\nMimeType=\(web);\n", .notApplication(type: "Application ", line: 2)),
            ("[Desktop Entry]\nExec=prog\nMimeType=\(web);\n", .notApplication(type: nil, line: nil)),
            ("[X]\n[Desktop Entry]\nType=Application\nExec=prog\nMimeType=\(web);\n", .firstGroupIsNot("X")),
            ("[Desktop Entry]\nType=Application\nTryExec=nope\nExec=prog\nMimeType=\(web);\n",
             .programNotFound(program: "nope", key: "TryExec", line: 3, searchPath: "/usr/bin:/bin")),
            ("[Desktop Entry]\nType=Application\nTryExec=prog\nExec=nope\nMimeType=\(web);\n",
             .programNotFound(program: "nope", key: "Exec", line: 4, searchPath: "/usr/bin:/bin")),
            ("[Desktop Entry]\nType=Application\nExec=\"prog\nMimeType=\(web);\n", .execDoesNotSplit(.unclosedQuote("\""), line: 3)),
            ("[Desktop Entry]\nType=Application\nExec=/opt/tool/run %u\nTryExec=\nMimeType=\(web);\n", nil),
            ("[Desktop Entry]\nType=Application\nExec='prog' %u\nMimeType=\(web);\n", nil),
        ]
        for (text, defect) in cases {
            var f = F()
            f.data(F.dataDir, entries: ["a.desktop": text])
            let candidate = f.choice(rules: .glib).candidates.first
            #expect(candidate?.verdict == (defect.map { .lost(.defect($0)) } ?? .chosen), "\(text)")
        }
    }

    @Test("no candidate at all: no default; a scheme is looked up lowercased")
    func noneAndCase() {
        var f = F()
        f.data(F.dataDir, entries: ["a.desktop": F.entry()])
        #expect(f.chosen("other") == (nil, nil))
        #expect(f.choice("WEB").chosenID == "a.desktop")
        #expect(f.choice("other").explanation == ["x-scheme-handler/other: no desktop entry"])
    }

    @Test("defaults.list is read after mimeapps.list in a data folder, and noted as outside any spec")
    func defaultsList() {
        var f = F()
        f.data(F.dataDir, lists: ["defaults.list": "[Default Applications]\n\(web)=b.desktop\n"], entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(f.chosen() == ("b.desktop", "b.desktop"))
        #expect(f.choice().specDifferences == [.defaultsList(path: "/usr/share/applications/defaults.list")])
    }

    @Test("an unreadable mimeapps.list counts for nothing, with a note")
    func unreadableList() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=b.desktop\ngarbage\n"])
        f.data(F.dataDir, entries: ["a.desktop": F.entry(), "b.desktop": F.entry()])
        #expect(f.chosen() == ("a.desktop", "a.desktop"))
        #expect(f.choice().notes == ["~/.config/mimeapps.list ignored: not a valid key file: line 3: 'garbage' is not a key=value pair, a [group] or a # comment"])
    }

    @Test("two files with one ID in a folder: the listing's last is the entry; the other's MimeType still counts (the cache's way)")
    func sameFolderSameID() {
        var f = F()
        f.data(F.dataDir, entries: ["kde-a.desktop": F.entry(), "kde/a.desktop": F.entry(exec: "other %u", types: [])])
        #expect(f.chosen() == ("kde-a.desktop", "kde-a.desktop"))
        #expect(f.choice().chosen?.entry?.path == "/usr/share/applications/kde/a.desktop")
    }

    @Test("the schemes the layout mentions")
    func mentioned() {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\nx-scheme-handler/mailto=a.desktop\n"])
        f.data(F.dataDir, entries: ["a.desktop": F.entry(types: ["x-scheme-handler/irc", "text/plain"])])
        #expect(DesktopHandlers(layout: f.layout()).mentionedSchemes == ["irc", "mailto"])
    }
}
