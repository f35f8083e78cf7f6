/// A property-list value, as iOS passes in an `annotation`: carried from caller to app
/// unchanged, without Foundation.
public indirect enum PropertyListValue: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case data([UInt8])
    case array([PropertyListValue])
    /// Keys in insertion order: a property-list dictionary has string keys.
    case dictionary([(String, PropertyListValue)])

    public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    /// A compact JSON-like rendering, for logs and `lsopen` output.
    public var description: String {
        switch self {
        case .string(let s): return JSONText.quote(s)
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .boolean(let b): return b ? "true" : "false"
        case .data(let d): return "<\(d.count) bytes>"
        case .array(let a): return "[" + a.map(\.description).joined(separator: ",") + "]"
        case .dictionary(let d): return "{" + d.map { JSONText.quote($0.0) + ":" + $0.1.description }.joined(separator: ",") + "}"
        }
    }
}
