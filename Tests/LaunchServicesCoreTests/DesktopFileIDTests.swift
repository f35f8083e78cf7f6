import LaunchServicesCore
import Testing

/// Desktop file IDs: the path below `applications/` with `/` as `-`, and which of two files
/// of one folder with the same ID counts.
@Suite("DesktopFileID: IDs from paths")
struct DesktopFileIDTests {
    @Test("subfolders are joined with -", arguments: [
        ("firefox.desktop", "firefox.desktop"),
        ("kde/konsole.desktop", "kde-konsole.desktop"),
        ("a/b/c.desktop", "a-b-c.desktop"),
        (".hidden.desktop", ".hidden.desktop"),
    ])
    func ids(path: String, id: String) {
        #expect(DesktopFileID.id(forRelativePath: path) == id)
    }

    @Test("only names ending in .desktop are entries")
    func names() {
        #expect(DesktopFileID.isEntryName("a.desktop"))
        #expect(DesktopFileID.isEntryName(".desktop"))
        #expect(!DesktopFileID.isEntryName("a.desktop~"))
        #expect(!DesktopFileID.isEntryName("mimeapps.list"))
    }

    @Test("two files of one folder with one ID: the one the listing returned last counts, as in GLib")
    func collisions() {
        let index = DesktopFileID.index(["kde-a.desktop", "b.desktop", "kde/a.desktop"])
        #expect(index.byID == ["kde-a.desktop": "kde/a.desktop", "b.desktop": "b.desktop"])
        #expect(index.hidden.map(\.relativePath) == ["kde-a.desktop"])
        #expect(index.hidden.map(\.by) == ["kde/a.desktop"])
        #expect(DesktopFileID.index(["kde/a.desktop", "kde-a.desktop"]).byID["kde-a.desktop"] == "kde-a.desktop")
    }
}
