/// A URL split into its RFC 3986 components, without Foundation.
///
/// Launch Services needs only what iOS apps read from `NSURL`: scheme, host, path, query
/// and fragment (Apple's `todolist://www.acme.com?Quarterly%20Report#200806231300`). The
/// original text is kept byte for byte, because it is what gets delivered.
public struct ParsedURL: Hashable, Sendable, CustomStringConvertible {
    /// The URL exactly as given.
    public let string: String
    public let scheme: URLScheme
    /// The raw (still percent-encoded) components; `nil` when absent, `""` when present but empty.
    public let rawAuthority: Substring?
    public let rawPath: Substring
    public let rawQuery: Substring?
    public let rawFragment: Substring?

    /// The longest URL accepted: a limit, so no message or buffer grows without bound.
    public static let maximumLength = 32 * 1024

    public init(_ text: String) throws(URLError) {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= Self.maximumLength else { throw .tooLong(length: text.utf8.count, limit: Self.maximumLength) }
        for scalar in text.unicodeScalars where scalar.value < 0x21 || scalar.value == 0x7F {
            throw .invalidCharacter(text, scalar.value)
        }
        guard let colon = text.firstIndex(of: ":") else { throw .missingScheme(text) }
        do {
            scheme = try URLScheme(validating: String(text[..<colon]))
        } catch {
            throw .invalidScheme(text, error)
        }
        string = text
        var rest = text[text.index(after: colon)...]
        if let hash = rest.firstIndex(of: "#") {
            rawFragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        } else {
            rawFragment = nil
        }
        if let question = rest.firstIndex(of: "?") {
            rawQuery = rest[rest.index(after: question)...]
            rest = rest[..<question]
        } else {
            rawQuery = nil
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let authorityEnd = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            rawAuthority = rest[afterSlashes..<authorityEnd]
            rawPath = rest[authorityEnd...]
        } else {
            rawAuthority = nil
            rawPath = rest
        }
    }

    public var description: String { string }

    /// The host, decoded; `nil` without an authority. `user@host:port` yields `host`.
    public var host: String? {
        guard var authority = rawAuthority else { return nil }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if let colon = authority.lastIndex(of: ":") { authority = authority[..<colon] }
        return PercentEncoding.decode(authority)
    }

    /// The port, when the authority names one.
    public var port: Int? {
        guard var authority = rawAuthority else { return nil }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let close = authority.lastIndex(of: "]") { authority = authority[authority.index(after: close)...] }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        return Int(authority[authority.index(after: colon)...])
    }

    /// The path, percent-decoded (`xyz://a/b%20c` → `/b c`; `xyz:hello` → `hello`).
    public var path: String { PercentEncoding.decode(rawPath) }
    /// The whole query, percent-decoded (`?Quarterly%20Report` → `Quarterly Report`).
    public var query: String? { rawQuery.map { PercentEncoding.decode($0) } }
    /// The fragment, percent-decoded.
    public var fragment: String? { rawFragment.map { PercentEncoding.decode($0) } }

    /// The query as ordered `name=value` pairs, each decoded on its own so that an encoded
    /// `&` or `=` inside a value survives. `+` is kept as `+` unless `plusAsSpace`.
    public func queryItems(plusAsSpace: Bool = false) -> [QueryItem] {
        guard let raw = rawQuery, !raw.isEmpty else { return [] }
        return raw.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let eq = pair.firstIndex(of: "=") {
                return QueryItem(
                    name: PercentEncoding.decode(pair[..<eq], plusAsSpace: plusAsSpace),
                    value: PercentEncoding.decode(pair[pair.index(after: eq)...], plusAsSpace: plusAsSpace))
            }
            return QueryItem(name: PercentEncoding.decode(pair, plusAsSpace: plusAsSpace), value: nil)
        }
    }

    /// The first value of the query item called `name`.
    public func queryValue(_ name: String, plusAsSpace: Bool = false) -> String? {
        queryItems(plusAsSpace: plusAsSpace).first { $0.name == name }?.value
    }
}

/// One `name=value` pair of a query, decoded.
public struct QueryItem: Hashable, Sendable {
    public var name: String
    public var value: String?
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// Why a URL was refused; each case quotes the URL.
public enum URLError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(length: Int, limit: Int)
    case invalidCharacter(String, UInt32)
    case missingScheme(String)
    case invalidScheme(String, SchemeError)

    public var description: String {
        switch self {
        case .empty: return "the URL is empty"
        case .tooLong(let length, let limit): return "the URL is \(length) bytes long; the limit is \(limit)"
        case .invalidCharacter(let url, let value):
            return "URL \(TerminalText.quoted(url)) contains a space or control character (U+\(String(value, radix: 16, uppercase: true))); percent-encode it (a space is %20)"
        case .missingScheme(let url): return "URL \(TerminalText.quoted(url)) has no scheme; write it as SCHEME:…, e.g. xyz://path"
        case .invalidScheme(let url, let error): return "URL \(TerminalText.quoted(url)): \(error)"
        }
    }
}
