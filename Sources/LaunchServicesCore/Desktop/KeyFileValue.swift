/// What a key-file value means, read as GLib 2.74's getters read it. A value that is not
/// UTF-8 is no value at all to GLib (its getters return nothing), so it is `nil` here too.
extension KeyFile.Value {
    /// `g_key_file_get_string`: the escapes `\s` `\n` `\t` `\r` `\\` become their
    /// characters; any other backslash pair is kept as written (GLib reports it but still
    /// returns the text), and a backslash ending the value is dropped.
    public var string: String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return text }
        return Self.unescape(Array(text.utf8), separator: nil).map { String(decoding: $0.joined(), as: UTF8.self) } ?? ""
    }

    /// `g_key_file_get_string_list`: items separated by `;` (`\;` is a `;` inside an item),
    /// each unescaped as `string` does; a last empty item (the usual trailing `;`) is not an
    /// item, an empty one elsewhere is. Nil when the value is not UTF-8, holds an escape GLib
    /// does not know, or ends with a backslash: GLib then returns no list.
    public var stringList: [String]? {
        guard Self.isUTF8(bytes) else { return nil }
        return Self.unescape(bytes, separator: UInt8(ascii: ";"))?.map { String(decoding: $0, as: UTF8.self) }
    }

    /// `g_key_file_get_boolean`, with trailing blanks ignored: `true` or `1` is true, `false`
    /// or `0` false; anything else (`True`, `yes`) is nil, which GLib takes as false.
    public var boolean: Bool? {
        var end = bytes.count
        while end > 0 && KeyFileParser.isSpace(bytes[end - 1]) { end -= 1 }
        switch String(decoding: bytes[..<end], as: UTF8.self) {
        case "true", "1": return true
        case "false", "0": return false
        default: return nil
        }
    }

    /// Whether `bytes` are valid UTF-8, as `g_utf8_validate` checks (no overlong forms, no
    /// surrogates, nothing past U+10FFFF), without making a string of them.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        // Nearly every value is ASCII: no decoding needed.
        if bytes.withUnsafeBufferPointer({ $0.allSatisfy { $0 < 0x80 } }) { return true }
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// The value's pieces, unescaped. With a separator: split on it (unless escaped); nil on
    /// an unknown escape or a trailing backslash, as GLib's list getter fails. Without one:
    /// a single piece, unknown escapes kept as written, a trailing backslash dropped.
    static func unescape(_ bytes: [UInt8], separator: UInt8?) -> [[UInt8]]? {
        var pieces: [[UInt8]] = []
        var current: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == separator {
                pieces.append(current)
                current = []
                continue
            }
            guard byte == UInt8(ascii: "\\") else {
                current.append(byte)
                continue
            }
            guard index < bytes.count else {
                if separator != nil { return nil }
                break
            }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "s"): current.append(0x20)
            case UInt8(ascii: "n"): current.append(0x0A)
            case UInt8(ascii: "t"): current.append(0x09)
            case UInt8(ascii: "r"): current.append(0x0D)
            case UInt8(ascii: "\\"): current.append(UInt8(ascii: "\\"))
            case separator: current.append(escaped)
            default:
                if separator != nil { return nil }
                current.append(UInt8(ascii: "\\"))
                current.append(escaped)
            }
        }
        if separator == nil || !current.isEmpty { pieces.append(current) }
        return pieces
    }
}
