/// A JSON text read as a property-list value, for `lsopen --annotation-json`: an annotation
/// is any property-list value (PROTOCOL.md §7), and JSON is how a shell script writes one.
///
/// Objects become dictionaries (keys in their order), arrays arrays, strings strings,
/// `true`/`false` booleans, a number without fraction or exponent an integer (it must fit in
/// 64 bits), any other number a real. JSON's `null` has no property-list form, and a
/// dictionary cannot hold a key twice: both are refused, by name, as is anything that is not
/// JSON. The text is bounded before it is read (`maximumBytes`), and so is its nesting
/// (`maximumDepth`, the wire's limit), so the recursion here never goes deeper than that.
public enum PropertyListJSON {
    /// The longest text read: far more than an annotation needs, well inside one frame.
    public static let maximumBytes = 256 * 1024
    /// Levels of values, the outermost counting as one: what the wire carries
    /// (`PropertyListCoding.maximumDepth`).
    public static let maximumDepth = 32

    public static func parse(_ text: String) throws(PropertyListJSONError) -> PropertyListValue {
        try parse(text, maximumBytes: maximumBytes, omittingNulls: false)
    }

    /// The same reading with another bound on the text, and with `omittingNulls` a `null`
    /// inside an object or array left out (its key with it) rather than refused: how the
    /// daemon's own JSON reports (where `null` means "none") become D-Bus values, which have
    /// no null either.
    public static func parse(_ text: String, maximumBytes: Int, omittingNulls: Bool) throws(PropertyListJSONError) -> PropertyListValue {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumBytes else { throw .tooLarge(size: bytes.count, limit: maximumBytes) }
        var reader = Reader(bytes: bytes, omitsNulls: omittingNulls)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.i == bytes.count else { throw .syntax("unexpected text after the value", at: reader.i) }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        let omitsNulls: Bool
        var i = 0

        init(bytes: [UInt8], omitsNulls: Bool) {
            self.bytes = bytes
            self.omitsNulls = omitsNulls
        }

        /// With `omitsNulls`, reads a `null` standing where a value is due; `false` (and
        /// nothing read) for anything else.
        mutating func skippedNull() throws(PropertyListJSONError) -> Bool {
            guard omitsNulls, next == UInt8(ascii: "n") else { return false }
            _ = try expect("null", giving: .boolean(false))
            return true
        }

        var next: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while let byte = next, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { i += 1 }
        }

        mutating func expect(_ literal: StaticString, giving value: PropertyListValue) throws(PropertyListJSONError) -> PropertyListValue {
            let start = i
            for k in 0 ..< literal.utf8CodeUnitCount {
                guard next == literal.utf8Start[k] else { throw .syntax("expected a JSON value", at: start) }
                i += 1
            }
            return value
        }

        mutating func value(depth: Int) throws(PropertyListJSONError) -> PropertyListValue {
            guard depth < PropertyListJSON.maximumDepth else { throw .tooDeep(limit: PropertyListJSON.maximumDepth) }
            guard let byte = next else { throw .syntax("the text ends where a value is due", at: i) }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", giving: .boolean(true))
            case UInt8(ascii: "f"): return try expect("false", giving: .boolean(false))
            case UInt8(ascii: "n"):
                let start = i
                _ = try expect("null", giving: .boolean(false))
                throw .null(at: start)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw .syntax("expected a JSON value", at: i)
            }
        }

        mutating func object(depth: Int) throws(PropertyListJSONError) -> PropertyListValue {
            i += 1
            var entries: [(String, PropertyListValue)] = []
            var keys: Set<String> = []
            skipSpace()
            if next == UInt8(ascii: "}") {
                i += 1
                return .dictionary(entries)
            }
            while true {
                skipSpace()
                guard next == UInt8(ascii: "\"") else { throw .syntax("expected a key (a string)", at: i) }
                let at = i
                let key = try string()
                guard keys.insert(key).inserted else { throw .duplicateKey(key, at: at) }
                skipSpace()
                guard next == UInt8(ascii: ":") else { throw .syntax("expected ':' after a key", at: i) }
                i += 1
                skipSpace()
                if try !skippedNull() { entries.append((key, try value(depth: depth + 1))) }
                skipSpace()
                switch next {
                case UInt8(ascii: ","): i += 1
                case UInt8(ascii: "}"):
                    i += 1
                    return .dictionary(entries)
                default: throw .syntax("expected ',' or '}'", at: i)
                }
            }
        }

        mutating func array(depth: Int) throws(PropertyListJSONError) -> PropertyListValue {
            i += 1
            var items: [PropertyListValue] = []
            skipSpace()
            if next == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                skipSpace()
                if try !skippedNull() { items.append(try value(depth: depth + 1)) }
                skipSpace()
                switch next {
                case UInt8(ascii: ","): i += 1
                case UInt8(ascii: "]"):
                    i += 1
                    return .array(items)
                default: throw .syntax("expected ',' or ']'", at: i)
                }
            }
        }

        mutating func string() throws(PropertyListJSONError) -> String {
            let start = i
            i += 1
            var scalars = String.UnicodeScalarView()
            var run = i
            func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[run ..< end], as: UTF8.self).unicodeScalars) }
            while true {
                guard let byte = next else { throw .syntax("a string is never closed", at: start) }
                switch byte {
                case UInt8(ascii: "\""):
                    flush(i)
                    i += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush(i)
                    scalars.append(try escape())
                    run = i
                case 0x00 ..< 0x20:
                    throw .syntax("a control character in a string must be escaped (\\n, \\u0000)", at: i)
                default:
                    i += 1
                }
            }
        }

        /// One escape after `\`, `\uD83D\uDE00` pairs included.
        mutating func escape() throws(PropertyListJSONError) -> Unicode.Scalar {
            let start = i
            i += 1
            guard let byte = next else { throw .syntax("a string ends inside an escape", at: start) }
            i += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let high = try hex4(escapeAt: start)
                if (0xD800 ... 0xDBFF).contains(high) {
                    guard next == UInt8(ascii: "\\"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "u") else {
                        throw .syntax("a \\u escape of a high surrogate must be followed by its low surrogate", at: start)
                    }
                    i += 2
                    let low = try hex4(escapeAt: start)
                    guard (0xDC00 ... 0xDFFF).contains(low) else { throw .syntax("a high surrogate is followed by no low surrogate", at: start) }
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
                }
                guard let scalar = Unicode.Scalar(high) else { throw .syntax("a \\u escape names a lone surrogate", at: start) }
                return scalar
            default:
                throw .syntax("unknown escape '\\\(Character(Unicode.Scalar(byte)))'", at: start)
            }
        }

        mutating func hex4(escapeAt start: Int) throws(PropertyListJSONError) -> UInt32 {
            guard i + 4 <= bytes.count else { throw .syntax("a \\u escape needs four hexadecimal digits", at: start) }
            var value: UInt32 = 0
            for _ in 0 ..< 4 {
                let byte = bytes[i]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .syntax("a \\u escape needs four hexadecimal digits", at: start)
                }
                value = value << 4 | UInt32(digit)
                i += 1
            }
            return value
        }

        mutating func number() throws(PropertyListJSONError) -> PropertyListValue {
            let start = i
            if next == UInt8(ascii: "-") { i += 1 }
            let integerStart = i
            let count = digits()
            guard count > 0 else { throw .syntax("a number needs digits", at: start) }
            guard count == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw .syntax("a number may not start with 0 unless it is 0", at: start) }
            var integral = true
            if next == UInt8(ascii: ".") {
                i += 1
                integral = false
                guard digits() > 0 else { throw .syntax("a fraction needs digits after '.'", at: start) }
            }
            if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
                i += 1
                integral = false
                if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { throw .syntax("an exponent needs digits", at: start) }
            }
            let text = String(decoding: bytes[start ..< i], as: UTF8.self)
            if integral {
                guard let value = Int64(text) else { throw .numberOutOfRange(text, at: start) }
                return .integer(value)
            }
            guard let value = Double(text), value.isFinite else { throw .numberOutOfRange(text, at: start) }
            return .real(value)
        }

        /// Reads decimal digits; returns how many.
        mutating func digits() -> Int {
            let start = i
            while let byte = next, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) { i += 1 }
            return i - start
        }

    }
}

/// Why a JSON text is not a property-list value; `at` is a byte offset into the text.
public enum PropertyListJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    case tooDeep(limit: Int)
    case null(at: Int)
    case duplicateKey(String, at: Int)
    case numberOutOfRange(String, at: Int)
    case syntax(String, at: Int)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): "the JSON is \(size) bytes; at most \(limit) are read"
        case .tooDeep(let limit): "the JSON nests deeper than \(limit) levels, the most an annotation may"
        case .null(let at): "null at byte \(at) has no property-list form; leave the key out, or use \"\" or false"
        case .duplicateKey(let key, let at): "the key \(TerminalText.quoted(key)) at byte \(at) appears twice in one object"
        case .numberOutOfRange(let text, let at): "the number \(text) at byte \(at) does not fit (integers are 64-bit, reals finite); write it as a string"
        case .syntax(let what, let at): "not JSON at byte \(at): \(what)"
        }
    }
}
