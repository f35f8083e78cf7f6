import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The edge that reads the XDG desktop layout from disk: what it reads, in which order, and
/// how it stays bounded and alive whatever the folders hold.
@Suite("DesktopLayoutReader: the desktop layout read from disk, bounded")
struct DesktopLayoutReaderTests {
    static func entry(_ exec: String = "prog %u", types: String = "x-scheme-handler/web;") -> String {
        "[Desktop Entry]\nType=Application\nName=x\nExec=\(exec)\nMimeType=\(types)\n"
    }

    func environment(_ root: String, _ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": root + "/home", "XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/sys", "XDG_CONFIG_HOME": root + "/config",
         "XDG_CONFIG_DIRS": root + "/etc", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME", "PATH": root + "/bin:" + root + "/bin2"]
            .merging(extra) { $1 }
    }

    func executable(_ path: String, mode: mode_t = 0o755) throws {
        try writeFile("#!/bin/sh\n", to: path)
        #expect(chmod(path, mode) == 0)
    }

    @Test("folders in GLib's order with their association files; entries by ID (subfolders with -); programs looked up on PATH")
    func reads() throws {
        try TemporaryFolder.with { root in
            try writeFile("[Default Applications]\nx-scheme-handler/web=b.desktop\n", to: root + "/config/mimeapps.list")
            try writeFile("[Default Applications]\nx-scheme-handler/web=c.desktop\n", to: root + "/config/gnome-mimeapps.list")
            try writeFile("[Default Applications]\nx-scheme-handler/web=a.desktop\n", to: root + "/etc/mimeapps.list")
            try writeFile(Self.entry(), to: root + "/data/applications/a.desktop")
            try writeFile(Self.entry("second %u"), to: root + "/data/applications/vendor/b.desktop")
            try writeFile(Self.entry("\(root)/opt/run %u"), to: root + "/sys/applications/c.desktop")
            try writeFile("[MIME Cache]\nx-scheme-handler/web=c.desktop;\n", to: root + "/sys/applications/mimeinfo.cache")
            try writeFile("[Default Applications]\nx-scheme-handler/web=a.desktop\n", to: root + "/sys/applications/defaults.list")
            try writeFile("not an entry", to: root + "/data/applications/readme.txt")
            try executable(root + "/bin2/prog")
            try executable(root + "/bin/second", mode: 0o644)
            try executable(root + "/bin2/second")
            try executable(root + "/opt/run")

            let read = DesktopLayoutReader().read(environment: environment(root), home: "/nowhere")
            let layout = read.layout
            #expect(layout.home == root + "/home")
            #expect(layout.currentDesktops == ["ubuntu", "gnome"])
            #expect(layout.folders.map(\.path) == [root + "/config", root + "/etc", root + "/data/applications", root + "/sys/applications"])
            #expect(layout.folders[0].lists.map(\.path) == [root + "/config/gnome-mimeapps.list", root + "/config/mimeapps.list"])
            #expect(layout.folders[3].lists.map(\.kind) == [.defaultsList, .mimeinfoCache])
            #expect(layout.folders[2].entries.keys.sorted() == ["a.desktop", "vendor-b.desktop"])
            #expect(layout.folders[2].entries["vendor-b.desktop"]?.path == root + "/data/applications/vendor/b.desktop")
            #expect(layout.programs == ["prog": .found(root + "/bin2/prog"), "second": .found(root + "/bin2/second"), root + "/opt/run": .found(root + "/opt/run")],
                    "bin/second has no execute bit: skipped, as GLib does for root")
            #expect(layout.searchPath == root + "/bin:" + root + "/bin2")
            #expect(read.foldersRead == [root + "/config", root + "/etc", root + "/data/applications", root + "/data/applications/vendor", root + "/sys/applications"])
            #expect(layout.notes.isEmpty)
            #expect(DesktopHandlers(layout: layout).choice(forScheme: "web").chosenID == "c.desktop")
        }
    }

    @Test("what cannot be read is kept as such, still taking its ID, and noted: too large, malformed, not a regular file, not readable lists")
    func unreadable() throws {
        try TemporaryFolder.with { root in
            try writeFile(String(repeating: "#", count: 300) + "\n" + Self.entry(), to: root + "/data/applications/big.desktop")
            try writeFile("[Desktop Entry]\nnot a pair\n", to: root + "/data/applications/bad.desktop")
            #expect(mkfifo(root + "/data/applications/fifo.desktop", 0o644) == 0)
            try FileManager.default.createDirectory(atPath: root + "/data/applications/folder.desktop/inner", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/config/mimeapps.list", withIntermediateDirectories: true)
            try writeFile("[Default Applications]\n" + String(repeating: "x", count: 200) + "=a\n", to: root + "/etc/mimeapps.list")
            let limits = DesktopReadLimits(maximumEntryBytes: 256, maximumLineBytes: 100)
            let layout = DesktopLayoutReader(limits: limits).read(environment: environment(root), home: root).layout
            let entries = layout.folders[2].entries
            #expect(entries["big.desktop"]?.content == .failure(.unreadable("larger than 256 bytes")))
            #expect(entries["bad.desktop"]?.content == .failure(.malformed(KeyFileError(line: 2, kind: .notKeyGroupOrComment("not a pair")))))
            #expect(entries["fifo.desktop"]?.content == .failure(.unreadable("not a regular file")))
            #expect(entries["folder.desktop"]?.content == .failure(.unreadable("not a regular file")), "a folder named .desktop is an entry, as in GLib")
            #expect(layout.folders[0].lists.map(\.content) == [.failure(.unreadable("not a regular file"))])
            #expect(layout.folders[1].lists.map(\.content) == [.failure(.malformed(KeyFileError(line: 2, kind: .lineTooLong(limit: 100))))])
            #expect(layout.notes.count == 6)
            #expect(layout.notes.contains("\(root)/data/applications/bad.desktop is no desktop entry: not a valid key file: line 2: 'not a pair' is not a key=value pair, a [group] or a # comment"))
        }
    }

    @Test("bounds on the walk: entries in all, folder depth, and a link back up is not followed twice")
    func walkBounds() throws {
        try TemporaryFolder.with { root in
            for name in ["a", "b", "c"] { try writeFile(Self.entry(), to: root + "/data/applications/\(name).desktop") }
            try writeFile(Self.entry(), to: root + "/data/applications/1/2/3/deep.desktop")
            #expect(symlink(root + "/data/applications", root + "/data/applications/loop") == 0)
            let few = DesktopLayoutReader(limits: DesktopReadLimits(maximumEntries: 2)).read(environment: environment(root), home: root).layout
            #expect(few.folders[2].entries.count == 2)
            #expect(few.notes.contains { $0.hasPrefix("more than 2 desktop entries: ") })
            let shallow = DesktopLayoutReader(limits: DesktopReadLimits(maximumDepth: 2)).read(environment: environment(root), home: root).layout
            #expect(shallow.folders[2].entries["1-2-3-deep.desktop"] == nil)
            #expect(shallow.notes.contains("\(root)/data/applications/1/2/3 is more than 2 folders deep: not read"))
            let full = DesktopLayoutReader().read(environment: environment(root), home: root).layout
            #expect(full.folders[2].entries["1-2-3-deep.desktop"] != nil)
            #expect(full.folders[2].entries["loop-a.desktop"] == nil)
            #expect(full.notes.contains("\(root)/data/applications/loop is a link back to a folder above it: not read again"))
        }
    }

    @Test("two files of one folder with one ID: the one the listing returns last is the entry; the other is kept apart and noted")
    func sameID() throws {
        try TemporaryFolder.with { root in
            try writeFile(Self.entry("one %u"), to: root + "/data/applications/kde-a.desktop")
            try writeFile(Self.entry("two %u"), to: root + "/data/applications/kde/a.desktop")
            let layout = DesktopLayoutReader().read(environment: environment(root), home: root).layout
            let folder = layout.folders[2]
            #expect(folder.entries.count == 1)
            #expect(folder.sameIDFiles.count == 1)
            #expect(Set([folder.entries["kde-a.desktop"]!.path, folder.sameIDFiles[0].path])
                        == [root + "/data/applications/kde-a.desktop", root + "/data/applications/kde/a.desktop"])
            #expect(layout.notes.count == 1)
        }
    }

    @Test("defaults when the XDG variables are unset: the home folder's, then the system's")
    func defaults() throws {
        try TemporaryFolder.with { root in
            try writeFile(Self.entry(), to: root + "/.local/share/applications/mine.desktop")
            let layout = DesktopLayoutReader().read(environment: ["PATH": "/usr/bin"], home: root).layout
            #expect(layout.folders.map(\.path).prefix(3) == [root + "/.config", "/etc/xdg", root + "/.local/share/applications"])
            #expect(layout.folders.map(\.path).suffix(2) == ["/usr/local/share/applications", "/usr/share/applications"])
            #expect(layout.folders[2].entries.keys.contains("mine.desktop"))
        }
    }
}
