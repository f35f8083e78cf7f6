import LaunchServicesCore
import Testing

/// Whether an entry file can be a handler: GLib's load test and what this daemon refuses
/// beyond it, each with the text an explanation shows.
@Suite("DesktopEntryCheck: GLib's load test and the daemon's extra refusals")
struct DesktopEntryCheckTests {
    func file(_ text: String, id: String = "a.desktop") -> DesktopLayout.EntryFile {
        let content: Result<DesktopEntry, DesktopEntryError>
        do {
            content = .success(try DesktopEntry(parsing: text))
        } catch {
            content = .failure(error)
        }
        return DesktopLayout.EntryFile(id: id, path: "/usr/share/applications/\(id)", content: content)
    }

    func glib(_ text: String, programs: [String: ProgramLookup] = ["prog": .found("/usr/bin/prog")]) -> EntryDefect? {
        DesktopEntryCheck.glibDefect(file(text), programs: programs, searchPath: "/usr/bin")
    }

    @Test("GLib loads an Application whose programs are found; a program not looked up counts as not found")
    func loads() {
        #expect(glib("[Desktop Entry]\nType=Application\nExec=prog %u\n") == nil)
        #expect(glib("[Desktop Entry]\nType=Application\n") == nil, "no Exec at all: GLib loads it")
        #expect(glib("[Desktop Entry]\nType=Application\nExec=prog\n", programs: [:])
                    == .programNotFound(program: "prog", key: "Exec", line: 3, searchPath: "/usr/bin"))
        #expect(glib("[Desktop Entry]\ngarbage\n") == .unreadable(.malformed(KeyFileError(line: 2, kind: .notKeyGroupOrComment("garbage")))))
    }

    @Test("the daemon's refusals beyond GLib, each only under its deviation")
    func extra() {
        let hidden = file("[Desktop Entry]\nType=Application\nExec=prog\nHidden=true\n")
        #expect(DesktopEntryCheck.extraDefect(hidden, rules: .launchServices) == .hidden(line: 4))
        #expect(DesktopEntryCheck.extraDefect(hidden, rules: .glib) == nil)
        let bare = file("[Desktop Entry]\nType=Application\n")
        #expect(DesktopEntryCheck.extraDefect(bare, rules: .launchServices) == .nothingToRun)
        #expect(DesktopEntryCheck.extraDefect(bare, rules: DesktopRules([.hiddenIsNoHandler])) == nil)
        #expect(DesktopEntryCheck.extraDefect(file("[Desktop Entry]\nType=Application\nDBusActivatable=true\n"), rules: .launchServices) == nil)
        let own = file("[Desktop Entry]\nType=Application\nExec=/x/lsopen %u\n", id: "swift-launch-services-lsopen.desktop")
        #expect(DesktopEntryCheck.extraDefect(own, rules: .launchServices) == .ownExport)
        let current = file("[Desktop Entry]\nType=Application\nDBusActivatable=true\n", id: "org.swift_launch_services.LaunchServices.desktop")
        #expect(DesktopEntryCheck.extraDefect(current, rules: .launchServices) == .ownExport)
        #expect(DesktopEntryCheck.extraDefect(current, rules: .glib) == nil)
    }

    @Test("lsopen's own entry: by its ID, or by running any lsopen")
    func ownExport() throws {
        let runs = try DesktopEntry(parsing: "[Desktop Entry]\nExec=\"/home/u/bin/lsopen\" %u\n")
        #expect(DesktopEntryCheck.isOwnExport(id: "mine.desktop", entry: runs))
        let plain = try DesktopEntry(parsing: "[Desktop Entry]\nExec=lsopen-helper %u\n")
        #expect(!DesktopEntryCheck.isOwnExport(id: "mine.desktop", entry: plain))
        #expect(DesktopEntryCheck.isOwnExport(id: "swift-launch-services-lsopen.desktop", entry: plain), "the earlier export's ID")
        #expect(DesktopEntryCheck.exportedEntryID == "org.swift_launch_services.LaunchServices.desktop")
        #expect(DesktopEntryCheck.isOwnExport(id: "org.swift_launch_services.LaunchServices.desktop", entry: plain))
        // Today's export as written, and one that runs nothing but is activated on the daemon's bus name.
        let exported = try DesktopEntry(parsing: "[Desktop Entry]\nType=Application\nExec=/opt/bin/lsopen %u\nDBusActivatable=true\n")
        #expect(DesktopEntryCheck.isOwnExport(id: DesktopEntryCheck.exportedEntryID, entry: exported))
        let activatedOnly = try DesktopEntry(parsing: "[Desktop Entry]\nType=Application\nDBusActivatable=true\n")
        #expect(DesktopEntryCheck.isOwnExport(id: DesktopEntryCheck.exportedEntryID, entry: activatedOnly))
        #expect(!DesktopEntryCheck.isOwnExport(id: "org.example.Other.desktop", entry: activatedOnly))
    }

    @Test("the programs to look up: TryExec, then Exec's first word")
    func programs() throws {
        #expect(DesktopEntryCheck.programsToFind(try DesktopEntry(parsing: "[Desktop Entry]\nTryExec=a\nExec='b c' %u\n")) == ["a", "b c"])
        #expect(DesktopEntryCheck.programsToFind(try DesktopEntry(parsing: "[Desktop Entry]\nTryExec=\nExec=\"open\n")) == [])
    }

    @Test("each defect's text", arguments: [
        (EntryDefect.unreadable(.noDesktopEntryGroup), "the file has no [Desktop Entry] group"),
        (.firstGroupIsNot("X-Other"), "its first group is [X-Other], not [Desktop Entry]"),
        (.notApplication(type: "Link", line: 2), "Type='Link' (line 2), not Type=Application"),
        (.notApplication(type: nil, line: nil), "no Type, not Type=Application"),
        (.programNotFound(program: "mail", key: "TryExec", line: 5, searchPath: "/usr/bin:/bin"),
         "its program 'mail' (TryExec, line 5) is not on PATH (/usr/bin:/bin)"),
        (.programNotFound(program: "/opt/x/run", key: "Exec", line: 4, searchPath: "/usr/bin"),
         "its program '/opt/x/run' (Exec, line 4) is not an executable file"),
        (.execDoesNotSplit(.unclosedQuote("\""), line: 3), "its Exec line (line 3) does not split into words: the text ends before the matching \""),
        (.hidden(line: 7), "Hidden=true (line 7): the entry is deleted"),
        (.nothingToRun, "no Exec and not DBusActivatable: nothing to run"),
        (.ownExport, "it is the entry lsctl export-xdg writes for lsopen, which would send the URL back here"),
    ])
    func texts(defect: EntryDefect, text: String) {
        #expect(defect.description == text)
    }
}
