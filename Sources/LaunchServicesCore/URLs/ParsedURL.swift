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

    /// Splits `text` in one pass over its UTF-8 bytes. The delimiters (`:`, `/`, `?`, `#`)
    /// are ASCII, and an ASCII byte is never part of a longer scalar, so each is found as a
    /// byte, as RFC 3986 defines them, even where a combining mark follows it; searching by
    /// `Character` would also walk grapheme clusters, about a sixth of the daemon's
    /// instructions per open.
    public init(_ text: String) throws(URLError) {
        let utf8 = text.utf8
        guard !utf8.isEmpty else { throw .empty }
        let length = utf8.count
        guard length <= Self.maximumLength else { throw .tooLong(length: length, limit: Self.maximumLength) }
        let found: Delimiters
        if let scanned = utf8.withContiguousStorageIfAvailable({ Delimiters($0) }) {
            found = scanned
        } else {
            found = Array(utf8).withUnsafeBufferPointer { Delimiters($0) }
        }
        if let control = found.control { throw .invalidCharacter(text, UInt32(control)) }
        guard let colonOffset = found.colon else { throw .missingScheme(text) }
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        let colon = index(colonOffset)
        do {
            scheme = try URLScheme(validating: String(text[..<colon]))
        } catch {
            throw .invalidScheme(text, error)
        }
        string = text
        // The rest of the URL (after the colon) ends at the query, else the fragment.
        let restEnd = found.question ?? found.hash ?? length
        rawFragment = found.hash.map { text[index($0 + 1)...] }
        rawQuery = found.question.map { text[index($0 + 1)..<(found.hash.map(index) ?? text.endIndex)] }
        let restEndIndex = restEnd == length ? text.endIndex : index(restEnd)
        if let authorityEnd = found.authorityEnd {
            let end = authorityEnd == length ? text.endIndex : index(authorityEnd)
            rawAuthority = text[index(colonOffset + 3)..<end]
            rawPath = text[end..<restEndIndex]
        } else {
            rawAuthority = nil
            rawPath = text[utf8.index(after: colon)..<restEndIndex]
        }
    }

    /// Where `ParsedURL(_:)`'s delimiters are, as byte offsets, from one pass.
    private struct Delimiters {
        /// The first space or control byte (a scalar below U+0021, or U+007F), if any.
        var control: UInt8?
        /// The first `:`.
        var colon: Int?
        /// The first `#` after the colon.
        var hash: Int?
        /// The first `?` after the colon and before `hash`.
        var question: Int?
        /// With `//` right after the colon: where the authority ends (the first `/` after
        /// them, else the end of the part before the query and fragment).
        var authorityEnd: Int?

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            for (offset, byte) in bytes.enumerated() {
                if byte < 0x21 || byte == 0x7F {
                    control = byte
                    return
                }
                guard let colon else {
                    if byte == UInt8(ascii: ":") { colon = offset }
                    continue
                }
                guard hash == nil else { continue }
                switch byte {
                case UInt8(ascii: "#"): hash = offset
                case UInt8(ascii: "?") where question == nil: question = offset
                case UInt8(ascii: "/") where question == nil && authorityEnd == nil && offset > colon + 2:
                    if bytes[colon + 1] == UInt8(ascii: "/") && bytes[colon + 2] == UInt8(ascii: "/") { authorityEnd = offset }
                default: break
                }
            }
            // `//` with no `/` after it: the authority runs to the query, the fragment or the end.
            if let colon, authorityEnd == nil {
                let restEnd = question ?? hash ?? bytes.count
                if restEnd >= colon + 3 && bytes[colon + 1] == UInt8(ascii: "/") && bytes[colon + 2] == UInt8(ascii: "/") {
                    authorityEnd = restEnd
                }
            }
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
