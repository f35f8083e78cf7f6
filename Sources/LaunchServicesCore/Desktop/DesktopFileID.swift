/// Desktop file IDs, as the Desktop Entry spec defines them: the path of the file below an
/// `applications` folder, with `/` turned into `-` (`kde/konsole.desktop` is
/// `kde-konsole.desktop`). Across the data folders the first folder in order that has an ID
/// owns it: the same ID in a later folder is hidden by it.
public enum DesktopFileID {
    /// The suffix every desktop entry file name has (GLib looks at no other file).
    public static let suffix = ".desktop"

    /// The ID of the file at `relativePath` (below `applications/`, `/`-separated).
    public static func id(forRelativePath relativePath: String) -> String {
        guard relativePath.utf8.contains(UInt8(ascii: "/")) else { return relativePath }
        return String(decoding: relativePath.utf8.map { $0 == UInt8(ascii: "/") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
    }

    /// Whether a file name is a desktop entry's: it ends in `.desktop` (GLib takes any such
    /// name, hidden or not, and recurses into every other name that is a folder).
    public static func isEntryName(_ name: String) -> Bool {
        name.hasSuffix(suffix)
    }

    /// The files of one folder by ID. `relativePaths` in the order the folder's listing
    /// returned them (a subfolder's files where the listing met the subfolder); when two
    /// files have the same ID (`kde-a.desktop` and `kde/a.desktop`) the one listed last wins,
    /// as in GLib, which keeps the last it met. The losers are returned too, for notes.
    public static func index(_ relativePaths: [String]) -> (byID: [String: String], hidden: [(id: String, relativePath: String, by: String)]) {
        var byID: [String: String] = [:]
        var hidden: [(id: String, relativePath: String, by: String)] = []
        for path in relativePaths {
            let id = id(forRelativePath: path)
            if let earlier = byID[id] { hidden.append((id, earlier, path)) }
            byID[id] = path
        }
        return (byID, hidden)
    }
}
