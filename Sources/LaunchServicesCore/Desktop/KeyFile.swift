/// The key-file syntax that desktop entries, `mimeapps.list`, `defaults.list` and
/// `mimeinfo.cache` share, read as GLib 2.74's GKeyFile reads it — because a handler is chosen
/// exactly as GLib chooses, and GLib ignores a whole file over one line it cannot read.
///
/// Lines end at `\n` (a `\r` before it is dropped); leading blanks are skipped; a line is a
/// comment (`#…`) or blank, a group (`[Name]`, blanks allowed after `]`), or `Key=Value`
/// (blanks around `=` dropped, trailing blanks of the value kept). A key may carry a locale
/// (`Name[de_DE@euro]`). A group met again continues the first one; a key met again replaces
/// its value (its line becomes the later one). Values are kept as written: `KeyFile.Value`
/// interprets escapes and lists when asked, as each GLib getter does.
///
/// A file GLib would refuse is a `KeyFileError` naming the line: a line that is none of the
/// above, a group name with `[`, `]` or a control character, an empty key or one with
/// characters GLib refuses, a key before the first group, an `Encoding` other than UTF-8 in
/// the first group. Two bounds GLib does not have: a line longer than `maxLineBytes`, and a
/// NUL byte (GLib would read each line only up to it; no text file holds one).
public struct KeyFile: Sendable, Equatable {
    /// One value as written in the file, with the line (from 1) of its key.
    public struct Value: Sendable, Equatable {
        public var bytes: [UInt8]
        public var line: Int

        public init(bytes: [UInt8], line: Int) {
            self.bytes = bytes
            self.line = line
        }

        public init(_ text: String, line: Int) {
            self.init(bytes: Array(text.utf8), line: line)
        }
    }

    /// One group: its kept keys and the line of its first header.
    public struct Group: Sendable, Equatable {
        public var name: String
        public var line: Int
        public var values: [String: Value]
    }

    /// Which groups and keys a reader keeps: the whole file is always checked, but only what
    /// is kept is stored (a desktop entry holds hundreds of translations nobody here reads).
    public enum Selection: Sendable {
        /// Every group, every key.
        case all
        /// Only the named groups, each with the keys `KeySelection` keeps.
        case groups([String: KeySelection])
    }

    public enum KeySelection: Sendable {
        case all
        /// Exactly these keys (no locale variants unless named).
        case named(Set<String>)
        /// Keys that begin with this text, e.g. `x-scheme-handler/`.
        case prefix(String)

        /// The names' bytes by length (the index), so that most keys are refused by their
        /// length alone.
        var namedByLength: [[[UInt8]]] {
            guard case .named(let names) = self else { return [] }
            var byLength = [[[UInt8]]](repeating: [], count: (names.map(\.utf8.count).max() ?? 0) + 1)
            for name in names { byLength[name.utf8.count].append(Array(name.utf8)) }
            return byLength
        }
    }

    /// The groups kept, by name.
    public private(set) var groups: [String: Group]
    /// The name of the file's first group (kept or not): GLib loads a desktop entry only
    /// when it is `Desktop Entry`.
    public private(set) var startGroup: String?
    /// Every group name in the file, kept or not, in order of first appearance.
    public private(set) var groupNames: [String]

    /// The value of `key` in `group`, if the file has it (and the selection kept it).
    public func value(_ key: String, in group: String) -> Value? {
        groups[group]?.values[key]
    }

    /// Whether the file has a group of that name (kept or not).
    public func hasGroup(_ name: String) -> Bool {
        groupNames.contains(name)
    }

    /// Reads `bytes`; throws the first thing GLib would refuse, or a bound exceeded.
    public init(parsing bytes: [UInt8], keeping selection: Selection = .all, maxLineBytes: Int = 65_536) throws(KeyFileError) {
        var parsed: KeyFile?
        try bytes.withUnsafeBufferPointer { (buffer: UnsafeBufferPointer<UInt8>) throws(KeyFileError) in
            parsed = try KeyFile(parsing: buffer, keeping: selection, maxLineBytes: maxLineBytes)
        }
        self = parsed!
    }

    /// Reads with a plan made once for many files (a desktop entry's selection).
    init(parsing bytes: UnsafeBufferPointer<UInt8>, plan: KeyFileParser.Plan, maxLineBytes: Int) throws(KeyFileError) {
        var parser = KeyFileParser(plan: plan, maxLineBytes: maxLineBytes)
        try parser.parse(bytes)
        groups = parser.groups
        startGroup = parser.groupNames.first
        groupNames = parser.groupNames
    }

    /// Reads the bytes of a buffer the caller owns (the daemon reads files into one buffer).
    public init(parsing bytes: UnsafeBufferPointer<UInt8>, keeping selection: Selection = .all, maxLineBytes: Int = 65_536) throws(KeyFileError) {
        var parser = KeyFileParser(plan: KeyFileParser.Plan(selection), maxLineBytes: maxLineBytes)
        try parser.parse(bytes)
        groups = parser.groups
        startGroup = parser.groupNames.first
        groupNames = parser.groupNames
    }

    /// Reads `text` (tests and hand-written cases).
    public init(parsing text: String, keeping selection: Selection = .all, maxLineBytes: Int = 65_536) throws(KeyFileError) {
        try self.init(parsing: Array(text.utf8), keeping: selection, maxLineBytes: maxLineBytes)
    }
}

/// What makes GLib refuse a whole key file, and the line where it is.
public struct KeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not blank, not a comment, not `[group]`, not `key=value` (also a line starting with `=`).
        case notKeyGroupOrComment(String)
        /// `[…]` with an empty name, or `[`, `]` or a control character in it.
        case invalidGroupName(String)
        /// Empty, with `]`, a `[` not opening a locale, characters after the locale, a space
        /// before `[`, or a locale with other than letters, digits, `-`, `_`, `.`, `@`.
        case invalidKeyName(String)
        /// A `key=value` line before any `[group]`.
        case keyBeforeFirstGroup
        /// `Encoding=` in the first group, other than `UTF-8`.
        case unsupportedEncoding(String)
        /// A NUL byte: no text file holds one.
        case nulByte
        /// A line longer than the reader's bound.
        case lineTooLong(limit: Int)
    }

    public var line: Int
    public var kind: Kind

    public init(line: Int, kind: Kind) {
        self.line = line
        self.kind = kind
    }

    public var description: String {
        switch kind {
        case .notKeyGroupOrComment(let text):
            return "line \(line): \(TerminalText.quoted(text)) is not a key=value pair, a [group] or a # comment"
        case .invalidGroupName(let name):
            return "line \(line): \(TerminalText.quoted(name)) is not a valid group name (empty, or with [, ] or a control character)"
        case .invalidKeyName(let key):
            return "line \(line): \(TerminalText.quoted(key)) is not a valid key name"
        case .keyBeforeFirstGroup:
            return "line \(line): a key before the first [group]"
        case .unsupportedEncoding(let value):
            return "line \(line): Encoding=\(TerminalText.quoted(value)) is not UTF-8"
        case .nulByte:
            return "line \(line): a NUL byte (not a text file)"
        case .lineTooLong(let limit):
            return "line \(line): longer than \(limit) bytes"
        }
    }
}

/// The line-by-line reader behind `KeyFile`; works on raw bytes so that a desktop entry's
/// hundreds of translated lines are checked without making a string of each (thousands of
/// entries are read at a daemon start).
struct KeyFileParser {
    /// A selection prepared once: what each kept group keeps, named keys by length.
    struct Plan: Sendable {
        var selection: KeyFile.Selection
        var namedByLength: [String: [[[UInt8]]]]

        init(_ selection: KeyFile.Selection) {
            self.selection = selection
            namedByLength = [:]
            if case .groups(let wanted) = selection {
                for (group, keys) in wanted { namedByLength[group] = keys.namedByLength }
            }
        }
    }

    let plan: Plan
    let maxLineBytes: Int
    var groups: [String: KeyFile.Group] = [:]
    var groupNames: [String] = []
    /// The group lines now belong to (nil before the first).
    var current: String?
    /// What is kept of the current group (nil: nothing), and its values so far.
    var currentKeys: KeyFile.KeySelection?
    var currentValues: [String: KeyFile.Value] = [:]
    var inStartGroup = false
    /// The current group's named keys by length (`.named` selections).
    var namedByLength: [[[UInt8]]] = []
    /// Where the file's first NUL byte is, if it has one.
    var nulOffset = Int.max

    init(plan: Plan, maxLineBytes: Int) {
        self.plan = plan
        self.maxLineBytes = maxLineBytes
    }

    mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(KeyFileError) {
        nulOffset = bytes.firstIndex(of: 0) ?? Int.max
        var start = 0
        var number = 0
        while start < bytes.count {
            number += 1
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            var lineEnd = end
            // GLib drops a `\r` only before a `\n`, not at the end of an unterminated last line.
            if end < bytes.count && lineEnd > start && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            if lineEnd - start > maxLineBytes { throw KeyFileError(line: number, kind: .lineTooLong(limit: maxLineBytes)) }
            if nulOffset >= start && nulOffset < end { throw KeyFileError(line: number, kind: .nulByte) }
            try parseLine(UnsafeBufferPointer(rebasing: bytes[start..<lineEnd]), number: number)
            start = end + 1
        }
        closeGroup()
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }

    mutating func parseLine(_ line: UnsafeBufferPointer<UInt8>, number: Int) throws(KeyFileError) {
        var first = 0
        while first < line.count && Self.isSpace(line[first]) { first += 1 }
        if first == line.count || line[first] == UInt8(ascii: "#") { return }
        let text = UnsafeBufferPointer(rebasing: line[first...])
        if text[0] == UInt8(ascii: "["), let close = Self.groupClose(text) {
            try openGroup(UnsafeBufferPointer(rebasing: text[1..<close]), number: number)
            return
        }
        guard let equals = text.firstIndex(of: UInt8(ascii: "=")), equals > 0 else {
            throw KeyFileError(line: number, kind: .notKeyGroupOrComment(String(decoding: line, as: UTF8.self)))
        }
        try addPair(text, equals: equals, number: number)
    }

    /// The index of the `]` closing a group line: the first `]`, followed only by spaces and
    /// tabs. Nil when the line is not a group line.
    static func groupClose(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let close = text.firstIndex(of: UInt8(ascii: "]")) else { return nil }
        for byte in text[(close + 1)...] where byte != 0x20 && byte != 0x09 { return nil }
        return close
    }

    /// Stores the current group's values (kept in a local table while its lines are read).
    mutating func closeGroup() {
        guard let name = current, currentKeys != nil else { return }
        groups[name]?.values = currentValues
    }

    mutating func openGroup(_ nameBytes: UnsafeBufferPointer<UInt8>, number: Int) throws(KeyFileError) {
        let valid = !nameBytes.isEmpty && !nameBytes.contains { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") || $0 < 0x20 || $0 == 0x7F }
        guard valid else { throw KeyFileError(line: number, kind: .invalidGroupName(String(decoding: nameBytes, as: UTF8.self))) }
        closeGroup()
        let name = String(decoding: nameBytes, as: UTF8.self)
        inStartGroup = groupNames.isEmpty || groupNames[0] == name
        current = name
        if !groupNames.contains(name) { groupNames.append(name) }
        switch plan.selection {
        case .all: currentKeys = .all
        case .groups(let wanted): currentKeys = wanted[name]
        }
        namedByLength = plan.namedByLength[name] ?? []
        if currentKeys != nil && groups[name] == nil {
            groups[name] = KeyFile.Group(name: name, line: number, values: [:])
        }
        currentValues = currentKeys == nil ? [:] : groups[name]?.values ?? [:]
    }

    mutating func addPair(_ text: UnsafeBufferPointer<UInt8>, equals: Int, number: Int) throws(KeyFileError) {
        guard current != nil else { throw KeyFileError(line: number, kind: .keyBeforeFirstGroup) }
        var keyEnd = equals
        while keyEnd > 0 && Self.isSpace(text[keyEnd - 1]) { keyEnd -= 1 }
        let key = UnsafeBufferPointer(rebasing: text[0..<keyEnd])
        guard Self.isValidKey(key) else {
            throw KeyFileError(line: number, kind: .invalidKeyName(String(decoding: key, as: UTF8.self)))
        }
        var valueStart = equals + 1
        while valueStart < text.count && Self.isSpace(text[valueStart]) { valueStart += 1 }
        let value = UnsafeBufferPointer(rebasing: text[valueStart...])
        if inStartGroup && Self.equals(key, "Encoding") {
            let isUTF8 = value.count == 5 && zip(value, "utf-8".utf8).allSatisfy { Self.lowercased($0) == $1 }
            if !isUTF8 { throw KeyFileError(line: number, kind: .unsupportedEncoding(String(decoding: value, as: UTF8.self))) }
        }
        guard let keys = currentKeys, keeps(keys, key) else { return }
        currentValues[String(decoding: key, as: UTF8.self)] = KeyFile.Value(bytes: Array(value), line: number)
    }

    func keeps(_ selection: KeyFile.KeySelection, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        switch selection {
        case .all: return true
        case .named: return key.count < namedByLength.count && namedByLength[key.count].contains { $0.elementsEqual(key) }
        case .prefix(let prefix): return key.count >= prefix.utf8.count && zip(key, prefix.utf8).allSatisfy { $0 == $1 }
        }
    }

    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: String) -> Bool {
        bytes.count == text.utf8.count && zip(bytes, text.utf8).allSatisfy { $0 == $1 }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    /// GLib's key rule: a name of anything but `=`, `[` and `]`, not starting or ending with
    /// a space, then optionally `[locale]` of letters, digits (any script), `-`, `_`, `.`,
    /// `@`, and nothing after it.
    static func isValidKey(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < key.count && key[index] != UInt8(ascii: "[") && key[index] != UInt8(ascii: "]") { index += 1 }
        guard index > 0, key[0] != 0x20, key[index - 1] != 0x20 else { return false }
        guard index < key.count else { return true }
        guard key[index] == UInt8(ascii: "[") else { return false }
        index += 1
        while index < key.count {
            let byte = key[index]
            if byte < 0x80 {
                // ASCII, the usual locale: letters, digits, - _ . @
                let isLocale = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "@")
                guard isLocale else { break }
                index += 1
                continue
            }
            var decoder = UTF8()
            var iterator = key[index...].makeIterator()
            guard case .scalarValue(let scalar) = decoder.decode(&iterator), isLocaleCharacter(scalar) else { break }
            index += UTF8.width(scalar)
        }
        return index < key.count && key[index] == UInt8(ascii: "]") && index + 1 == key.count
    }

    static func isLocaleCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}
