/// Whether a `DBusActivatable=true` desktop entry is launched over D-Bus, and at which name:
/// decided as GLib (2.74) decides it, so the daemon and `gio open` launch an entry the same way.
///
/// The bus name is the entry's *file name* minus `.desktop`, not its desktop file ID: an
/// entry read from `applications/kde/org.kde.Foo.desktop` has the ID `kde-org.kde.Foo.desktop`
/// and the bus name `org.kde.Foo`. When that is not a valid well-known bus name (the
/// D-Bus specification's rules, `DBusName`), GLib ignores `DBusActivatable` and runs the
/// entry's Exec line; so does the daemon. The key itself (`true` or not) is the entry
/// reader's; this is only the name rule.
public enum DBusActivation {
    /// The suffix GLib strips; it must end the name exactly (case matters).
    public static let fileSuffix = ".desktop"

    /// Why an entry that asks for D-Bus activation is launched through Exec instead.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file name does not end in `.desktop`.
        case notDesktopFile(fileName: String)
        /// The file name minus `.desktop` is not a well-known bus name.
        case invalidBusName(name: String, problem: DBusName.Problem)

        public var description: String {
            switch self {
            case .notDesktopFile(let fileName):
                return "DBusActivatable is ignored: the file name \(TerminalText.quoted(fileName)) does not end in .desktop"
            case .invalidBusName(let name, let problem):
                return "DBusActivatable is ignored: \(TerminalText.quoted(name)) (the file name without .desktop) is not a D-Bus bus name: \(problem); rename the file (org.example.App.desktop) to use D-Bus activation"
            }
        }
    }

    /// The well-known bus name for the desktop entry at `path` (a file name, or a path whose
    /// last component is taken), or why there is none.
    public static func busName(forEntryFile path: String) -> Result<String, Refusal> {
        // Bytes, as GLib compares them (a Character comparison would join a combining mark
        // after `.desktop` to its `p`).
        let bytes = Array(path.utf8)
        let fileBytes = bytes.lastIndex(of: UInt8(ascii: "/")).map { Array(bytes[($0 + 1)...]) } ?? bytes
        let fileName = String(decoding: fileBytes, as: UTF8.self)
        let suffix = Array(fileSuffix.utf8)
        guard fileBytes.count >= suffix.count, Array(fileBytes.suffix(suffix.count)) == suffix else {
            return .failure(.notDesktopFile(fileName: fileName))
        }
        let name = String(decoding: fileBytes.dropLast(suffix.count), as: UTF8.self)
        if let problem = DBusName.problem(wellKnown: name) { return .failure(.invalidBusName(name: name, problem: problem)) }
        return .success(name)
    }

    /// `org.freedesktop.Application`, which a D-Bus activatable app implements at
    /// `DBusName.objectPath(forWellKnown:)`.
    public static let interface = "org.freedesktop.Application"
}
