/// A URL scheme as RFC 3986 §3.1 defines it: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
///
/// Schemes match case-insensitively, so the registry keeps only the lowercase form; the
/// spelling an app declared is kept for display.
public struct URLScheme: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The canonical (lowercase) form, used for every comparison and lookup.
    public let normalized: String

    /// Validates `text` and lowercases it, or says precisely what is wrong with it.
    public init(validating text: String) throws(SchemeError) {
        guard let first = text.utf8.first else { throw .empty }
        guard Self.isAlpha(first) else { throw .mustStartWithLetter(text) }
        var hasUppercase = false
        for byte in text.utf8 {
            guard Self.isAlpha(byte) || Self.isDigit(byte) || byte == 0x2B || byte == 0x2D || byte == 0x2E else {
                // By character, so a refusal quotes what the user typed ('é'), not one of its bytes.
                let character = text.first { !($0.asciiValue.map { Self.isAlpha($0) || Self.isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E } ?? false) }
                throw .invalidCharacter(text, character ?? Character(Unicode.Scalar(byte)))
            }
            hasUppercase = hasUppercase || (byte >= 0x41 && byte <= 0x5A)
        }
        // Stored and typed schemes are nearly always lowercase already: no copy then (the
        // daemon validates every stored scheme at start, 50,000 of them for 10,000 apps).
        normalized = hasUppercase ? Self.lowercased(text) : text
    }

    public var description: String { normalized }
    public static func < (lhs: URLScheme, rhs: URLScheme) -> Bool { lhs.normalized < rhs.normalized }

    static func isAlpha(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// ASCII lowercasing; schemes are ASCII by construction, so no locale is involved.
    static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}

/// Why a scheme was refused. Each case names the offending text so messages can quote it.
public enum SchemeError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case mustStartWithLetter(String)
    case invalidCharacter(String, Character)

    public var description: String {
        switch self {
        case .empty:
            return "the scheme is empty"
        case .mustStartWithLetter(let s):
            return "scheme \(TerminalText.quoted(s)) must start with a letter (RFC 3986: ALPHA *( ALPHA / DIGIT / \"+\" / \"-\" / \".\" ))"
        case .invalidCharacter(let s, let c):
            let codes = c.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
            let printable = c.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !($0.value >= 0x80 && $0.value < 0xA0) }
            let shown = c.isASCII && printable ? "'\(c)'" : (printable ? "'\(c)' (\(codes))" : codes)
            return "scheme \(TerminalText.quoted(s)) contains \(shown); only letters, digits, '+', '-' and '.' are allowed (RFC 3986)"
        }
    }
}
