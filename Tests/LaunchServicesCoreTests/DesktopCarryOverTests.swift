import LaunchServicesCore
import Testing

/// What a read could not read now is taken from the read before (`DesktopLayout.carryingOver`):
/// an unreadable place is no evidence that anything in it left.
@Suite("DesktopLayout.carryingOver: what could not be read now is kept")
struct DesktopCarryOverTests {
    typealias F = DesktopLayoutFixture
    let web = "x-scheme-handler/web"

    /// The layout before: a default in ~/.config, two entries in the data home (one in a
    /// subfolder), one in /usr/share.
    func before() -> DesktopLayout {
        var f = F()
        f.config(F.configHome, ["mimeapps.list": "[Default Applications]\n\(web)=b.desktop\n"])
        f.data(F.dataHome, entries: ["a.desktop": F.entry(), "kde/b.desktop": F.entry(exec: "other %u")])
        f.data(F.dataDir, entries: ["c.desktop": F.entry()])
        return f.layout()
    }

    /// The same folders read again with nothing found in the data home and no lists.
    func emptied() -> DesktopLayout {
        var f = F()
        f.config(F.configHome)
        f.data(F.dataHome, cache: false)
        f.data(F.dataDir, entries: ["c.desktop": F.entry()])
        var layout = f.layout()
        layout.programs = ["prog": .found("/usr/bin/prog")]
        return layout
    }

    @Test("nothing unreadable: the read as it is, even if everything left")
    func complete() {
        let now = emptied()
        #expect(now.carryingOver([], from: before()) == now)
        #expect(DesktopHandlers(layout: now).chosen(forScheme: "web")?.id == "c.desktop")
    }

    @Test("an unreadable applications folder keeps its entries, and their programs, from the read before")
    func unreadableFolder() throws {
        let kept = emptied().carryingOver([DesktopUnreadable(kind: .folder, path: F.dataHome, reason: "Too many open files")], from: before())
        let home = try #require(kept.folders.first { $0.path == F.dataHome })
        #expect(Set(home.entries.keys) == ["a.desktop", "kde-b.desktop"])
        #expect(kept.programs["other"] == .found("/usr/bin/other"), "kept from before")
        #expect(kept.programs["prog"] == .found("/usr/bin/prog"), "this read's own")
        #expect(DesktopHandlers(layout: kept).chosen(forScheme: "web")?.id == "a.desktop", "its entries count again; the list was read (empty)")
    }

    @Test("a configuration folder that could not be opened keeps its association files from the read before")
    func unreadableConfigFolder() throws {
        let kept = emptied().carryingOver([DesktopUnreadable(kind: .folder, path: F.configHome, reason: "Permission denied")], from: before())
        #expect(try #require(kept.folders.first { $0.path == F.configHome }).lists == before().folders[0].lists)
        #expect(DesktopHandlers(layout: kept).chosen(forScheme: "web")?.id == "c.desktop", "the kept default names b, which left")
    }

    @Test("an unreadable subfolder keeps only what was below it; what this read found wins")
    func unreadableSubfolder() throws {
        var now = emptied()
        let home = try #require(now.folders.firstIndex { $0.path == F.dataHome })
        now.folders[home].entries["a.desktop"] = DesktopLayout.EntryFile(id: "a.desktop", path: F.dataHome + "/a.desktop", content: .failure(.noDesktopEntryGroup))
        let kept = now.carryingOver([DesktopUnreadable(kind: .folder, path: F.dataHome + "/kde", reason: "Input/output error")], from: before())
        let folder = try #require(kept.folders.first { $0.path == F.dataHome })
        #expect(Set(folder.entries.keys) == ["a.desktop", "kde-b.desktop"])
        #expect(folder.entries["a.desktop"]?.content == .failure(.noDesktopEntryGroup), "read now: not replaced")
    }

    @Test("an unreadable entry file is the one read before; an unreadable list is the one read before, in its place")
    func unreadableFileAndList() throws {
        var now = emptied()
        let home = try #require(now.folders.firstIndex { $0.path == F.dataHome })
        now.folders[home].entries["a.desktop"] = DesktopLayout.EntryFile(id: "a.desktop", path: F.dataHome + "/a.desktop", content: .failure(.unreadable("Permission denied")))
        let config = try #require(now.folders.firstIndex { $0.path == F.configHome })
        now.folders[config].lists = [DesktopLayout.AssociationList(kind: .mimeapps, path: F.configHome + "/mimeapps.list", content: .failure(.unreadable("Permission denied")))]
        let kept = now.carryingOver([DesktopUnreadable(kind: .entry, path: F.dataHome + "/a.desktop", reason: "Permission denied"),
                                     DesktopUnreadable(kind: .list, path: F.configHome + "/mimeapps.list", reason: "Permission denied")], from: before())
        let folder = try #require(kept.folders.first { $0.path == F.dataHome })
        #expect(folder.entries["a.desktop"] == before().folders[1].entries["a.desktop"])
        #expect(folder.entries["kde-b.desktop"] == nil, "its folder was read: b left")
        let lists = try #require(kept.folders.first { $0.path == F.configHome }).lists
        #expect(lists == before().folders[0].lists)
        #expect(DesktopHandlers(layout: kept).chosen(forScheme: "web")?.id == "a.desktop", "the kept default names b, which left: a, the first declaring")
    }

    @Test("with nothing read before, an unreadable place simply holds nothing")
    func nothingBefore() {
        let now = emptied()
        let kept = now.carryingOver([DesktopUnreadable(kind: .folder, path: F.dataHome, reason: "Too many open files")], from: DesktopLayout(home: "/home/u", folders: []))
        #expect(kept.folders == now.folders)
    }

    @Test("each kind says what could not be read and why, control characters escaped")
    func descriptions() {
        #expect(DesktopUnreadable(kind: .folder, path: "/a", reason: "Permission denied").description == "desktop entries folder /a could not be read (Permission denied)")
        #expect(DesktopUnreadable(kind: .entry, path: "/a/x\u{1b}.desktop", reason: "Input/output error").description == "desktop entry /a/x\\x1B.desktop could not be read (Input/output error)")
        #expect(DesktopUnreadable(kind: .list, path: "/c/mimeapps.list", reason: "Too many open files").description == "association file /c/mimeapps.list could not be read (Too many open files)")
    }
}
