/// One entry of the `a{sv}` options of the D-Bus `Open`, as the bus thread read it: the
/// variant's value when it is a string or a boolean, else only its signature (refused here).
public enum BusOptionValue: Sendable, Equatable {
    case string(String)
    case boolean(Bool)
    case other(signature: String)
}

/// The options of `Open(s url, a{sv} options)` on the project's D-Bus interface: `lsopen`'s
/// options under the same names, with the same meaning.
///
/// | key | type | lsopen |
/// | --- | --- | --- |
/// | `app` | `s` | `--app ID` |
/// | `background` | `b` | `--background` |
/// | `fallback` | `s` | `--fallback URL` (opened when no app handles the URL and no `app` was given) |
/// | `annotation` | `s` | `--annotation TEXT` (the annotation is that string) |
/// | `annotationJSON` | `s` | `--annotation-json JSON` (any property-list value, written as JSON) |
///
/// A property-list annotation travels as JSON text rather than as a D-Bus variant tree: the
/// variant types do not map one to one onto property-list types (no date, no real/integer
/// distinction a caller would choose on purpose in every binding), and lsopen already
/// defines what the JSON means (`PropertyListJSON`). Anything else (an unknown key, a wrong
/// type, both annotations) is refused as `invalidRequest`, by name, never ignored: a caller
/// that misspells `background` must not have its app brought to the front silently.
public struct BusOpenOptions: Sendable, Equatable {
    public var options: OpenOptions
    public var fallback: String?
    public var annotation: PropertyListValue?

    /// The most entries one options dictionary may hold (the five keys, and room to spare).
    public static let maximumEntries = 16
    public static let keys = ["app", "background", "fallback", "annotation", "annotationJSON"]

    public init(options: OpenOptions = OpenOptions(), fallback: String? = nil, annotation: PropertyListValue? = nil) {
        self.options = options
        self.fallback = fallback
        self.annotation = annotation
    }

    /// Reads the entries in order; `total` is how many the dictionary held (the thread reads
    /// at most `maximumEntries`).
    public static func parse(_ entries: [(key: String, value: BusOptionValue)], total: Int) throws(OpenError) -> BusOpenOptions {
        guard total <= maximumEntries else {
            throw OpenError(.invalidRequest, "the options hold \(total) entries; Open takes at most \(maximumEntries) (known: \(keys.joined(separator: ", ")))")
        }
        var parsed = BusOpenOptions()
        var seen: Set<String> = []
        for (key, value) in entries {
            guard seen.insert(key).inserted else { throw OpenError(.invalidRequest, "the option \(TerminalText.quoted(key)) is given twice") }
            switch (key, value) {
            case ("app", .string(let id)):
                parsed.options.app = id
            case ("background", .boolean(let flag)):
                parsed.options.background = flag
            case ("fallback", .string(let url)):
                parsed.fallback = url
            case ("annotation", .string(let text)):
                parsed.annotation = .string(text)
            case ("annotationJSON", .string(let json)):
                do {
                    parsed.annotation = try PropertyListJSON.parse(json)
                } catch {
                    throw OpenError(.invalidRequest, "the option annotationJSON: \(error)")
                }
            case ("app", _), ("fallback", _), ("annotation", _), ("annotationJSON", _):
                throw OpenError(.invalidRequest, "the option \(key) is a string (s), not \(signature(of: value))")
            case ("background", _):
                throw OpenError(.invalidRequest, "the option background is a boolean (b), not \(signature(of: value))")
            default:
                throw OpenError(.invalidRequest, "unknown option \(TerminalText.quoted(key)); Open knows \(keys.joined(separator: ", "))")
            }
        }
        guard !(seen.contains("annotation") && seen.contains("annotationJSON")) else {
            throw OpenError(.invalidRequest, "give one of the options annotation (a string) and annotationJSON (any property-list value)")
        }
        return parsed
    }

    private static func signature(of value: BusOptionValue) -> String {
        switch value {
        case .string: return "s"
        case .boolean: return "b"
        case .other(let signature): return TerminalText.quoted(signature)
        }
    }
}
