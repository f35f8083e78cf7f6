/// Words of a command line split as GLib 2.74's `g_shell_parse_argv` splits them: how GLib
/// finds the program of an `Exec` line to decide whether the entry is installed (and refuses
/// the entry when the line does not split). Only for that check: launching follows the
/// Desktop Entry spec's own quoting rules, not these.
///
/// Outside quotes, blanks (space, tab) and newlines separate words, `\` escapes the next
/// character (a backslash-newline is nothing), and `#` after a space, a newline or at the
/// very start begins a comment to the end of the line. Inside `'…'` everything is literal;
/// inside `"…"` a backslash escapes only `"`, `\`, `` ` ``, `$` and a newline. An unclosed
/// quote, a trailing backslash, a `#` that starts a comment as the last character (GLib
/// takes it for an open quote), or no word at all is an error.
public enum ShellWords {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unclosedQuote(Character)
        case trailingBackslash
        case empty

        public var description: String {
            switch self {
            case .unclosedQuote(let quote): return "the text ends before the matching \(quote)"
            case .trailingBackslash: return "the text ends just after a backslash"
            case .empty: return "the text is empty (or only blanks and comments)"
            }
        }
    }

    /// The words of `text`, unquoted.
    public static func split(_ text: String) -> Result<[String], Failure> {
        switch tokens(Array(text.utf8)) {
        case .failure(let failure): return .failure(failure)
        case .success(let tokens): return .success(tokens.map { String(decoding: unquote($0), as: UTF8.self) })
        }
    }

    /// The first word (the program), if the whole line splits.
    public static func program(of text: String) -> Result<String, Failure> {
        switch tokens(Array(text.utf8)) {
        case .failure(let failure): return .failure(failure)
        case .success(let tokens): return .success(String(decoding: unquote(tokens[0]), as: UTF8.self))
        }
    }

    /// `commentStart`: just after the `#`; GLib takes a `#` that ends the text for a quote
    /// left open.
    private enum State { case plain, backslash, commentStart, comment, quote(UInt8) }

    /// The raw words, quotes and escapes still in them.
    static func tokens(_ bytes: [UInt8]) -> Result<[[UInt8]], Failure> {
        var tokens: [[UInt8]] = []
        var token: [UInt8]?
        var state = State.plain
        // Whether the byte before is an unpaired backslash: `\"` does not close a `"…"`.
        var escaping = false
        for (index, byte) in bytes.enumerated() {
            switch state {
            case .backslash:
                if byte != 0x0A { token.append(UInt8(ascii: "\\"), byte) }
                state = .plain
            case .comment, .commentStart:
                state = byte == 0x0A ? .plain : .comment
            case .quote(let quote):
                if byte == quote && !(quote == UInt8(ascii: "\"") && escaping) { state = .plain }
                token.append(byte)
            case .plain:
                switch byte {
                case 0x0A, 0x20, 0x09:
                    if let finished = token, !finished.isEmpty || byte == 0x0A { tokens.append(finished) }
                    token = nil
                case UInt8(ascii: "'"), UInt8(ascii: "\""):
                    token.append(byte)
                    state = .quote(byte)
                case UInt8(ascii: "\\"):
                    state = .backslash
                case UInt8(ascii: "#") where index == 0 || bytes[index - 1] == 0x20 || bytes[index - 1] == 0x0A:
                    state = .commentStart
                default:
                    token.append(byte)
                }
            }
            escaping = byte == UInt8(ascii: "\\") ? !escaping : false
        }
        if let finished = token { tokens.append(finished) }
        switch state {
        case .backslash: return .failure(.trailingBackslash)
        case .quote(let quote): return .failure(.unclosedQuote(Character(Unicode.Scalar(quote))))
        case .commentStart: return .failure(.unclosedQuote("#"))
        case .plain, .comment: break
        }
        return tokens.isEmpty ? .failure(.empty) : .success(tokens)
    }

    /// A raw word without its quotes and escapes.
    static func unquote(_ token: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < token.count {
            let byte = token[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                if index < token.count {
                    if token[index] != 0x0A { out.append(token[index]) }
                    index += 1
                }
            case UInt8(ascii: "'"):
                while index < token.count && token[index] != UInt8(ascii: "'") {
                    out.append(token[index])
                    index += 1
                }
                index += 1
            case UInt8(ascii: "\""):
                while index < token.count && token[index] != UInt8(ascii: "\"") {
                    if token[index] == UInt8(ascii: "\\"), index + 1 < token.count,
                       [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "`"), UInt8(ascii: "$"), 0x0A].contains(token[index + 1]) {
                        out.append(token[index + 1])
                        index += 2
                    } else {
                        out.append(token[index])
                        index += 1
                    }
                }
                index += 1
            default:
                out.append(byte)
            }
        }
        return out
    }
}

extension [UInt8]? {
    /// Appends to the word, starting it if there is none yet.
    fileprivate mutating func append(_ bytes: UInt8...) {
        if self == nil { self = [] }
        self!.append(contentsOf: bytes)
    }
}
