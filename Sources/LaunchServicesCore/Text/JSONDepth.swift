/// How deep a JSON text nests arrays and objects, checked in one pass before Foundation's
/// recursive `JSONSerialization` sees it: a pasteboard item of 900 KiB can hold `[[[[…`
/// 900,000 levels deep. Today's Foundation stops at 512 levels itself; this makes the bound
/// the daemon's own, whatever Foundation version it runs on, and names it in the refusal.
///
/// Brackets inside strings do not count; a string ends at a `"` not escaped by `\`, as in
/// JSON. Text with a NUL byte is refused: JSON that is not UTF-8 (UTF-16, UTF-32) always has
/// one, and its quotes and escapes cannot be read byte by byte.
public enum JSONDepth {
    /// 512 levels, the bound Foundation's parser has: far more than data needs.
    public static let defaultLimit = 512

    public static func check(_ bytes: [UInt8], limit: Int = defaultLimit) throws(JSONDepthError) {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if byte == 0 { throw .notUTF8 }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                guard depth <= limit else { throw .tooDeep(limit: limit) }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                // An unbalanced close is for the parser to refuse; it cannot deepen anything.
                depth = max(0, depth - 1)
            default:
                break
            }
        }
    }
}

/// Why a JSON text was refused before parsing.
public enum JSONDepthError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooDeep(limit: Int)
    case notUTF8

    public var description: String {
        switch self {
        case .tooDeep(let limit): return "nests arrays and objects deeper than the limit of \(limit) levels (nesting depth > \(limit))"
        case .notUTF8: return "is not UTF-8 JSON (it holds a NUL byte)"
        }
    }
}
