/// JSON text written without Foundation (the app runtime and core stay Foundation-free), and
/// safe to read on a terminal: JSON output is often read there (`TerminalText`), so every
/// character a terminal acts on is written as a `\u` escape, which means the same character.
public enum JSONText {
    /// `s` as a JSON string: `"`, `\` and every control character escaped, not only those
    /// JSON requires.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if TerminalText.isControl(scalar) {
                    out += unicodeEscape(scalar)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A JSON document (another program's, a daemon's answer) with the control characters
    /// that JSON lets through raw (DEL, C1, line separators, bidirectional marks) written as
    /// `\u` escapes. Outside strings a document is ASCII, so they can only be inside strings,
    /// where the escape stands for the same character: the document means exactly what it did.
    public static func escapingTerminalControls(_ document: String) -> String {
        guard document.unicodeScalars.contains(where: { $0.value >= 0x7F && TerminalText.isControl($0) }) else { return document }
        var out = String.UnicodeScalarView()
        for scalar in document.unicodeScalars {
            if scalar.value >= 0x7F, TerminalText.isControl(scalar) {
                out.append(contentsOf: unicodeEscape(scalar).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `\u001b`: a character as JSON escapes it (a surrogate pair beyond U+FFFF).
    public static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        func unit(_ value: UInt32) -> String {
            let hex = String(value, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        guard scalar.value > 0xFFFF else { return unit(scalar.value) }
        let offset = scalar.value - 0x10000
        return unit(0xD800 + (offset >> 10)) + unit(0xDC00 + (offset & 0x3FF))
    }
}
