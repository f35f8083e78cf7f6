/// One association file: a `mimeapps.list` (or `$desktop-mimeapps.list`), a `defaults.list`,
/// or a `mimeinfo.cache`, read as GLib 2.74 reads them: a key file whose groups
/// `[Default Applications]`, `[Added Associations]`, `[Removed Associations]` (and, in the
/// cache, `[MIME Cache]`) map a MIME type to a `;`-separated list of desktop file IDs.
///
/// Only keys that begin with `keyPrefix` are kept (`x-scheme-handler/` by default: a
/// system's lists hold hundreds of file types no URL needs); the whole file is still
/// checked, since GLib ignores all of a file it cannot read.
public struct MimeAppsList: Sendable, Equatable {
    public static let defaultApplications = "Default Applications"
    public static let addedAssociations = "Added Associations"
    public static let removedAssociations = "Removed Associations"
    public static let mimeCache = "MIME Cache"
    static let groups = [defaultApplications, addedAssociations, removedAssociations, mimeCache]

    public var file: KeyFile

    public init(file: KeyFile) {
        self.file = file
    }

    public init(parsing bytes: [UInt8], keyPrefix: String = "x-scheme-handler/", maxLineBytes: Int = 65_536) throws(KeyFileError) {
        self.init(file: try KeyFile(parsing: bytes, keeping: Self.selection(keyPrefix), maxLineBytes: maxLineBytes))
    }

    public init(parsing bytes: UnsafeBufferPointer<UInt8>, keyPrefix: String = "x-scheme-handler/", maxLineBytes: Int = 65_536) throws(KeyFileError) {
        self.init(file: try KeyFile(parsing: bytes, keeping: Self.selection(keyPrefix), maxLineBytes: maxLineBytes))
    }

    static func selection(_ keyPrefix: String) -> KeyFile.Selection {
        let keys: KeyFile.KeySelection = keyPrefix.isEmpty ? .all : .prefix(keyPrefix)
        return .groups(Dictionary(uniqueKeysWithValues: groups.map { ($0, keys) }))
    }

    public init(parsing text: String, keyPrefix: String = "x-scheme-handler/") throws(KeyFileError) {
        try self.init(parsing: Array(text.utf8), keyPrefix: keyPrefix)
    }

    /// The IDs `group` lists for `type`, and the line, as GLib's list getter reads them:
    /// nil when the file has no such key or the value is no readable list (GLib skips it).
    /// Items are kept as written, empty or with blanks: GLib finds no entry by such an ID.
    public func ids(in group: String, for type: String) -> (ids: [String], line: Int)? {
        guard let value = file.value(type, in: group), let ids = value.stringList else { return nil }
        return (ids, value.line)
    }

    /// Whether the file has `group` at all (GLib warns about, and ignores, an added or removed
    /// group in a file where it is not allowed).
    public func hasGroup(_ group: String) -> Bool {
        file.hasGroup(group)
    }

    /// Every kept type the file names, in any group.
    public var types: Set<String> {
        Set(file.groups.values.flatMap(\.values.keys))
    }
}
