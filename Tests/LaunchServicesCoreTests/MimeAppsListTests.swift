import LaunchServicesCore
import Testing

/// mimeapps.list, defaults.list and mimeinfo.cache: the IDs each group lists for a type, and
/// the line.
@Suite("MimeAppsList: association files")
struct MimeAppsListTests {
    static let text = """
        [Default Applications]
        x-scheme-handler/mailto=org.example.Mail.desktop;thunderbird.desktop;
        text/html=firefox.desktop

        [Added Associations]
        x-scheme-handler/mailto=mutt.desktop;
        x-scheme-handler/irc = hexchat.desktop ; irssi.desktop

        [Removed Associations]
        x-scheme-handler/mailto=evolution.desktop;
        """

    @Test("the IDs of a group for a type, with the line; blanks stay part of an ID, as in GLib")
    func ids() throws {
        let list = try MimeAppsList(parsing: Self.text)
        #expect(list.ids(in: MimeAppsList.defaultApplications, for: "x-scheme-handler/mailto")?.ids == ["org.example.Mail.desktop", "thunderbird.desktop"])
        #expect(list.ids(in: MimeAppsList.defaultApplications, for: "x-scheme-handler/mailto")?.line == 2)
        #expect(list.ids(in: MimeAppsList.addedAssociations, for: "x-scheme-handler/mailto")?.line == 6)
        #expect(list.ids(in: MimeAppsList.addedAssociations, for: "x-scheme-handler/irc")?.ids == ["hexchat.desktop ", " irssi.desktop"])
        #expect(list.ids(in: MimeAppsList.removedAssociations, for: "x-scheme-handler/mailto")?.ids == ["evolution.desktop"])
        #expect(list.ids(in: MimeAppsList.removedAssociations, for: "x-scheme-handler/irc") == nil)
        #expect(list.types == ["x-scheme-handler/mailto", "x-scheme-handler/irc"])
    }

    @Test("only x-scheme-handler/ keys are kept by default; an empty prefix keeps all")
    func prefix() throws {
        #expect(try MimeAppsList(parsing: Self.text).ids(in: MimeAppsList.defaultApplications, for: "text/html") == nil)
        #expect(try MimeAppsList(parsing: Self.text, keyPrefix: "").ids(in: MimeAppsList.defaultApplications, for: "text/html")?.ids == ["firefox.desktop"])
    }

    @Test("a list GLib cannot read is none; a whole file it refuses is an error")
    func refusals() throws {
        let list = try MimeAppsList(parsing: "[Default Applications]\nx-scheme-handler/a=b.desktop;c\\q;\n")
        #expect(list.ids(in: MimeAppsList.defaultApplications, for: "x-scheme-handler/a") == nil)
        #expect(throws: KeyFileError(line: 3, kind: .notKeyGroupOrComment("garbage"))) {
            try MimeAppsList(parsing: "[Default Applications]\nx-scheme-handler/a=b.desktop\ngarbage\n")
        }
    }

    @Test("the cache's [MIME Cache] group")
    func cache() throws {
        let cache = try MimeAppsList(parsing: "[MIME Cache]\nx-scheme-handler/a=b.desktop;c.desktop;\n")
        #expect(cache.ids(in: MimeAppsList.mimeCache, for: "x-scheme-handler/a")?.ids == ["b.desktop", "c.desktop"])
        #expect(cache.hasGroup(MimeAppsList.mimeCache) && !cache.hasGroup(MimeAppsList.addedAssociations))
    }
}
