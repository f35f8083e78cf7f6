import LaunchServicesCore
import Testing

/// The XDG Base Directory folders from an environment, and the current desktops.
@Suite("XDGBaseDirectories: folders and desktops from the environment")
struct XDGBaseDirectoriesTests {
    @Test("unset or empty variables take the spec's defaults")
    func defaults() {
        for environment in [[:], ["XDG_DATA_HOME": "", "XDG_DATA_DIRS": "", "XDG_CONFIG_HOME": "", "XDG_CONFIG_DIRS": ""]] {
            let folders = XDGBaseDirectories(environment: environment, home: "/home/u")
            #expect(folders.dataHome == "/home/u/.local/share")
            #expect(folders.dataDirs == ["/usr/local/share", "/usr/share"])
            #expect(folders.configHome == "/home/u/.config")
            #expect(folders.configDirs == ["/etc/xdg"])
            #expect(folders.currentDesktops == [])
        }
    }

    @Test("given values, in order, trailing slashes dropped, duplicates kept; relative and empty components ignored")
    func given() {
        let folders = XDGBaseDirectories(environment: [
            "XDG_DATA_HOME": "/d/home/", "XDG_DATA_DIRS": "/a::relative:/b/:/a", "XDG_CONFIG_HOME": "relative",
            "XDG_CONFIG_DIRS": "/c1:/c2",
        ], home: "/home/u/")
        #expect(folders.dataHome == "/d/home")
        #expect(folders.dataDirs == ["/a", "/b", "/a"])
        #expect(folders.configHome == "/home/u/.config", "a relative XDG_CONFIG_HOME is ignored")
        #expect(folders.configDirs == ["/c1", "/c2"])
    }

    @Test("XDG_CURRENT_DESKTOP: components lowercased, invalid ones (not letters, digits, - and _) dropped", arguments: [
        ("GNOME", ["gnome"]),
        ("ubuntu:GNOME", ["ubuntu", "gnome"]),
        ("X-Cinnamon", ["x-cinnamon"]),
        ("GNOME:bad/part:KDE", ["gnome", "kde"]),
        ("::gnome:", ["gnome"]),
        ("Ünicode:ok_1", ["ok_1"]),
        ("", []),
    ])
    func desktops(value: String, expected: [String]) {
        #expect(XDGBaseDirectories.desktops(value) == expected)
    }

    @Test("the layout's folders in GLib's order, and each folder's association files in reading order")
    func folders() {
        let directories = XDGBaseDirectories(dataHome: "/h/data", dataDirs: ["/d1", "/d2"], configHome: "/h/config",
                                             configDirs: ["/etc/xdg"], currentDesktops: ["ubuntu", "gnome"])
        let folders = DesktopLayout.folders(of: directories)
        #expect(folders.map(\.path) == ["/h/config", "/etc/xdg", "/h/data/applications", "/d1/applications", "/d2/applications"])
        #expect(folders.map(\.kind) == [.config, .config, .data, .data, .data])
        #expect(folders[0].plannedLists(desktops: directories.currentDesktops).map(\.path)
                    == ["/h/config/ubuntu-mimeapps.list", "/h/config/gnome-mimeapps.list", "/h/config/mimeapps.list"])
        #expect(folders[2].plannedLists(desktops: ["kde"]).map(\.path) == [
            "/h/data/applications/kde-mimeapps.list", "/h/data/applications/mimeapps.list",
            "/h/data/applications/defaults.list", "/h/data/applications/mimeinfo.cache",
        ])
    }
}
