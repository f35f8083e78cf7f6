/// Text that came from someone else (a URL, a bundle path, an app's error message) made safe
/// to show in a message, on a terminal or in a log.
///
/// A URL may carry characters that a terminal acts on instead of showing: a newline forges a
/// second log line, ESC (and the one-byte CSI, U+009B) starts a control sequence that can
/// recolour, move the cursor or retitle the window, and the bidirectional overrides reorder
/// what is shown. Messages therefore quote such text with every one of those escaped, so
/// what a person reads is exactly what was sent, and nothing reaches the terminal raw.
public enum TerminalText {
    /// `'text'`, with `\` and `'` escaped (`\\`, `\'`) and every control character written
    /// as an escape: `\n`, `\r`, `\t`, `\x1B` (C0, DEL and C1), `\u{202E}` (line and
    /// paragraph separators, bidirectional marks and overrides).
    public static func quoted(_ text: some StringProtocol) -> String {
        var out = "'"
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "'": out += "\\'"
            default: append(scalar, to: &out)
            }
        }
        return out + "'"
    }

    /// `text` with only its control characters escaped (as `quoted` writes them), nothing
    /// else changed: for whole messages, which may already hold quoted parts.
    public static func escapingControls(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return String(text) }
        var out = ""
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// Whether a terminal would act on `scalar` rather than show it.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        guard isControl(scalar) else {
            out.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            out += scalar.value <= 0xFF ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u{\(hex)}"
        }
    }
}
