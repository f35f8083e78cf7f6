import LaunchServicesCore
import Testing

/// The `[Desktop Entry]` group of a desktop entry: the keys read, their lines, and what is
/// malformed.
@Suite("DesktopEntry: the [Desktop Entry] group as GLib reads it")
struct DesktopEntryTests {
    static let mail = """
        # Mail client
        [Desktop Entry]
        Type=Application
        Name=Mail
        Name[de]=Post
        Exec=mail --compose %u
        TryExec=mail
        MimeType=x-scheme-handler/mailto;text/calendar;
        Terminal=false
        NoDisplay=true
        DBusActivatable=true
        Path=/srv/mail
        StartupNotify=true

        [Desktop Action compose]
        Exec=mail --new
        """

    @Test("every key read, interpreted, with its line")
    func keys() throws {
        let entry = try DesktopEntry(parsing: Self.mail)
        #expect(entry.startGroup == "Desktop Entry")
        #expect(entry.type == "Application")
        #expect(entry.name == "Mail")
        #expect(entry.exec == "mail --compose %u")
        #expect(entry.tryExec == "mail")
        #expect(entry.mimeTypes == ["x-scheme-handler/mailto", "text/calendar"])
        #expect(!entry.terminal && entry.noDisplay && entry.dbusActivatable && entry.startupNotify && !entry.hidden)
        #expect(entry.workingDirectory == "/srv/mail")
        #expect(entry.line(of: "Type") == 3)
        #expect(entry.line(of: "MimeType") == 8)
        #expect(entry.line(of: "Hidden") == nil)
        #expect(entry.values["Name[de]"] == nil, "translations are checked, not kept")
    }

    @Test("escapes in values; an empty Path is none; a first group other than [Desktop Entry] is kept for the check")
    func values() throws {
        let entry = try DesktopEntry(parsing: "[X-Other]\na=1\n[Desktop Entry]\nExec=my\\sprog %u\nPath=\nHidden=true\nTerminal=1\n")
        #expect(entry.startGroup == "X-Other")
        #expect(entry.exec == "my prog %u")
        #expect(entry.workingDirectory == nil)
        #expect(entry.hidden && entry.terminal)
    }

    @Test("declares: MimeType items with trailing blanks removed, compared exactly; never for a Hidden entry (as update-desktop-database)")
    func declares() throws {
        let entry = try DesktopEntry(parsing: "[Desktop Entry]\nMimeType=x-scheme-handler/a ;X-Scheme-Handler/B; x-scheme-handler/c;x-scheme-handler/a;\n")
        #expect(entry.declares("x-scheme-handler/a"))
        #expect(!entry.declares("x-scheme-handler/b"), "MIME types compare case-sensitively, as in GLib")
        #expect(!entry.declares("x-scheme-handler/c"), "a leading blank is kept")
        #expect(entry.declaredTypes == ["x-scheme-handler/a", "X-Scheme-Handler/B"])
        let hidden = try DesktopEntry(parsing: "[Desktop Entry]\nHidden=true\nMimeType=x-scheme-handler/a;\n")
        #expect(!hidden.declares("x-scheme-handler/a"))
        #expect(hidden.declaredTypes.isEmpty)
        let unreadable = try DesktopEntry(parsing: "[Desktop Entry]\nMimeType=x-scheme-handler/a;bad\\q;\n")
        #expect(unreadable.mimeTypes == nil)
        #expect(!unreadable.declares("x-scheme-handler/a"))
        let invalid = try DesktopEntry(parsing: "[Desktop Entry]\nMimeType=nosubtype;x-scheme-handler/;x-scheme-handler/a b;x-bad(/x;\n")
        #expect(invalid.declaredTypes.isEmpty, "update-desktop-database skips what is no MIME type")
    }

    @Test("malformed files and files without the group are named errors")
    func errors() {
        #expect(throws: DesktopEntryError.malformed(KeyFileError(line: 2, kind: .notKeyGroupOrComment("garbage")))) {
            try DesktopEntry(parsing: "[Desktop Entry]\ngarbage\n")
        }
        #expect(throws: DesktopEntryError.noDesktopEntryGroup) { try DesktopEntry(parsing: "[Other]\na=1\n") }
        #expect(throws: DesktopEntryError.noDesktopEntryGroup) { try DesktopEntry(parsing: "") }
        #expect(DesktopEntryError.noDesktopEntryGroup.description == "has no [Desktop Entry] group")
        #expect(DesktopEntryError.malformed(KeyFileError(line: 2, kind: .keyBeforeFirstGroup)).description
                    == "not a valid key file: line 2: a key before the first [group]")
        #expect(DesktopEntryError.unreadable("not a regular file").description == "could not be read: not a regular file")
    }
}
