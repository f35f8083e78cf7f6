/// The `[Desktop Entry]` group of a desktop entry file, with the keys choosing and launching
/// a handler need, each interpreted as GLib 2.74 interprets it, and the line of each key
/// (for explanations).
///
/// Whether it can be a handler is not decided here (see `DesktopEntryCheck`): GLib still
/// counts a file whose first group is not `[Desktop Entry]` when it builds its cache, and a
/// file it cannot load still hides nothing less than one it can.
public struct DesktopEntry: Sendable, Equatable {
    /// The group GLib reads.
    public static let group = "Desktop Entry"
    /// The keys kept (the rest of the file is checked, not stored).
    public static let keys: Set<String> = [
        "Type", "Name", "Exec", "TryExec", "MimeType", "Hidden", "NoDisplay", "Terminal",
        "DBusActivatable", "Path", "StartupNotify", "Icon",
    ]

    /// The file's first group: GLib loads the entry only when it is `Desktop Entry`.
    public var startGroup: String
    /// The `[Desktop Entry]` group's values as written, by key.
    public var values: [String: KeyFile.Value]

    public init(startGroup: String, values: [String: KeyFile.Value]) {
        self.startGroup = startGroup
        self.values = values
    }

    /// Reads a desktop entry file; throws when GLib would not read it as a key file, or when
    /// it has no `[Desktop Entry]` group.
    public init(parsing bytes: [UInt8], maxLineBytes: Int = 65_536) throws(DesktopEntryError) {
        var parsed: DesktopEntry?
        try bytes.withUnsafeBufferPointer { (buffer: UnsafeBufferPointer<UInt8>) throws(DesktopEntryError) in
            parsed = try DesktopEntry(parsing: buffer, maxLineBytes: maxLineBytes)
        }
        self = parsed!
    }

    /// What the key-file reader keeps of an entry, prepared once.
    static let plan = KeyFileParser.Plan(.groups([group: .named(keys)]))

    /// Reads the bytes of a buffer the caller owns.
    public init(parsing bytes: UnsafeBufferPointer<UInt8>, maxLineBytes: Int = 65_536) throws(DesktopEntryError) {
        let file: KeyFile
        do {
            file = try KeyFile(parsing: bytes, plan: Self.plan, maxLineBytes: maxLineBytes)
        } catch {
            throw .malformed(error)
        }
        guard let start = file.startGroup, let group = file.groups[Self.group] else { throw .noDesktopEntryGroup }
        self.init(startGroup: start, values: group.values)
    }

    public init(parsing text: String) throws(DesktopEntryError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// The line of `key`, if the entry has it.
    public func line(of key: String) -> Int? { values[key]?.line }

    /// `Type`, unescaped (`Application`, `Link`, `Directory`, …).
    public var type: String? { values["Type"]?.string }
    public var name: String? { values["Name"]?.string }
    /// `Exec`, unescaped as a string (its own quoting is the launcher's business).
    public var exec: String? { values["Exec"]?.string }
    public var tryExec: String? { values["TryExec"]?.string }
    /// `Path`: the working folder to run the program in; empty means none, as GLib reads it.
    public var workingDirectory: String? { values["Path"]?.string.flatMap { $0.isEmpty ? nil : $0 } }
    /// `MimeType` as GLib's list getter returns it (nil when the key is absent or unreadable).
    public var mimeTypes: [String]? { values["MimeType"]?.stringList }
    public var hidden: Bool { values["Hidden"]?.boolean ?? false }
    public var noDisplay: Bool { values["NoDisplay"]?.boolean ?? false }
    public var terminal: Bool { values["Terminal"]?.boolean ?? false }
    public var dbusActivatable: Bool { values["DBusActivatable"]?.boolean ?? false }
    public var startupNotify: Bool { values["StartupNotify"]?.boolean ?? false }

    /// Whether `MimeType` declares `type`, as update-desktop-database (0.26) puts it in the
    /// folder's mimeinfo.cache: not for a `Hidden` entry; each item with trailing blanks
    /// removed, compared exactly (GLib compares types case-sensitively).
    public func declares(_ type: String) -> Bool {
        guard !hidden, let items = mimeTypes, Self.isCacheableType(type) else { return false }
        return items.contains { Self.trimmingTrailingBlanks($0) == type }
    }

    /// The MIME types `declares` would accept, for indexing every type at once.
    public var declaredTypes: [String] { declaredTypes(withPrefix: "") }

    /// The declared types that begin with `prefix` (a system's entries declare hundreds of
    /// file types; only `x-scheme-handler/` ones choose URL handlers).
    public func declaredTypes(withPrefix prefix: String) -> [String] {
        guard !hidden, let value = values["MimeType"] else { return [] }
        // The common case, no escapes: split the bytes, make strings of matching items only.
        if !value.bytes.contains(UInt8(ascii: "\\")) {
            var found: [String] = []
            for item in value.bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true)
            where item.count > prefix.utf8.count && item.starts(with: prefix.utf8) {
                var end = item.endIndex
                while end > item.startIndex && KeyFileParser.isSpace(item[end - 1]) { end -= 1 }
                let type = String(decoding: item[..<end], as: UTF8.self)
                if Self.isCacheableType(type) && !found.contains(type) { found.append(type) }
            }
            // A value that is not UTF-8 is no list at all (checked only when it matters).
            return found.isEmpty || KeyFile.Value.isUTF8(value.bytes) ? found : []
        }
        guard let items = value.stringList else { return [] }
        var seen = Set<String>()
        return items.filter { $0.hasPrefix(prefix) }.map(Self.trimmingTrailingBlanks)
            .filter { Self.isCacheableType($0) && seen.insert($0).inserted }
    }

    static func trimmingTrailingBlanks(_ text: String) -> String {
        var bytes = Array(text.utf8)
        while let last = bytes.last, KeyFileParser.isSpace(last) { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The items update-desktop-database (0.26) puts in the cache: a media type and a
    /// non-empty subtype of characters MIME allows (no controls, space, `()<>@,;:\"/[]?=`).
    /// (Its list of registered media types matters only for types other than
    /// `x-scheme-handler/…`, which are not looked up here.)
    static func isCacheableType(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")), slash != bytes.startIndex else { return false }
        let subtype = bytes[bytes.index(after: slash)...]
        return !subtype.isEmpty && bytes[..<slash].allSatisfy(isMIMECharacter) && subtype.allSatisfy(isMIMECharacter)
    }

    static func isMIMECharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0...32, 127, UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "/"),
             UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "?"), UInt8(ascii: "="):
            return false
        default:
            return true
        }
    }
}

/// Why a desktop entry file is no desktop entry at all.
public enum DesktopEntryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// GLib would not read it as a key file.
    case malformed(KeyFileError)
    /// A key file, but without a `[Desktop Entry]` group.
    case noDesktopEntryGroup
    /// The reader could not read it (the system's words), or would not (a bound).
    case unreadable(String)

    public var description: String {
        switch self {
        case .malformed(let error): return "not a valid key file: \(error)"
        case .noDesktopEntryGroup: return "has no [Desktop Entry] group"
        case .unreadable(let reason): return "could not be read: \(reason)"
        }
    }
}
