/// An x-callback-url request (x-callback-url 1.0 draft):
/// `SCHEME://x-callback-url/ACTION?x-source=…&x-success=…&x-error=…&x-cancel=…&PARAMETERS`.
///
/// Parsing decodes every parameter on its own, so a callback URL that carries its own query
/// (`x-success=app%3A%2F%2Fdone%3Fsession%3D1`) survives intact. Building encodes every
/// value fully. The replies append to the callback URL whatever query it already has.
public struct XCallbackRequest: Sendable, Equatable {
    /// The host that marks an x-callback-url.
    public static let host = "x-callback-url"

    public var scheme: URLScheme
    /// The action (the path after the host), without the leading slash; may be empty.
    public var action: String
    /// `x-source`: the friendly name of the calling app (informational; the daemon's verified
    /// source application is what counts).
    public var source: String?
    public var success: String?
    public var error: String?
    public var cancel: String?
    /// The action's own parameters, in order, decoded.
    public var parameters: [QueryItem]

    public init(scheme: URLScheme, action: String, source: String? = nil, success: String? = nil, error: String? = nil, cancel: String? = nil, parameters: [QueryItem] = []) {
        self.scheme = scheme
        self.action = action
        self.source = source
        self.success = success
        self.error = error
        self.cancel = cancel
        self.parameters = parameters
    }

    /// Reads an x-callback-url; refuses a URL whose host is not `x-callback-url`.
    public init(_ url: ParsedURL) throws(XCallbackError) {
        guard url.host == Self.host else { throw .notXCallback(url.string) }
        scheme = url.scheme
        var path = url.path
        if path.hasPrefix("/") { path.removeFirst() }
        action = path
        parameters = []
        for item in url.queryItems() {
            switch Self.reservedName(item.name) {
            case "x-source": source = item.value
            case "x-success": success = item.value
            case "x-error": error = item.value
            case "x-cancel": cancel = item.value
            default: parameters.append(item)
            }
        }
    }

    /// The reserved parameter (`x-source`, `x-success`, `x-error`, `x-cancel`) that `name`
    /// spells in any case, else `nil`. Callees compare names case-insensitively, some with
    /// Unicode case folding, which also takes `ſ` (U+017F) for `s` and `K` (U+212A) for `k`;
    /// those two are the only non-ASCII characters that fold to an ASCII letter.
    public static func reservedName(_ name: String) -> String? {
        var folded = ""
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x41...0x5A: folded.unicodeScalars.append(Unicode.Scalar(scalar.value + 0x20)!)
            case 0x17F: folded.append("s")
            case 0x212A: folded.append("k")
            default: folded.unicodeScalars.append(scalar)
            }
        }
        return reservedNames.contains(folded) ? folded : nil
    }

    static let reservedNames: Set<String> = ["x-source", "x-success", "x-error", "x-cancel"]

    /// The first value of an action parameter.
    public func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// The request as a URL string, every value percent-encoded.
    public var url: String {
        var items: [QueryItem] = []
        if let source { items.append(QueryItem(name: "x-source", value: source)) }
        if let success { items.append(QueryItem(name: "x-success", value: success)) }
        if let error { items.append(QueryItem(name: "x-error", value: error)) }
        if let cancel { items.append(QueryItem(name: "x-cancel", value: cancel)) }
        items += parameters
        let query = Self.encode(items)
        return "\(scheme)://\(Self.host)/\(action.split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.encodeComponent(String($0)) }.joined(separator: "/"))" + (query.isEmpty ? "" : "?" + query)
    }

    /// The x-success URL with `results` appended, or `nil` when the caller gave none.
    public func successReply(_ results: [QueryItem] = []) -> String? {
        success.map { Self.append(results, to: $0) }
    }

    /// The x-error URL with `errorCode` and `errorMessage` appended, or `nil` when none was given.
    public func errorReply(code: String, message: String) -> String? {
        error.map { Self.append([QueryItem(name: "errorCode", value: code), QueryItem(name: "errorMessage", value: message)], to: $0) }
    }

    /// The x-cancel URL, or `nil` when none was given.
    public var cancelReply: String? { cancel }

    /// Appends encoded parameters to `url`, after any query it has and before its fragment.
    public static func append(_ items: [QueryItem], to url: String) -> String {
        guard !items.isEmpty else { return url }
        var base = Substring(url)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return String(base) + separator + encode(items) + String(fragment)
    }

    static func encode(_ items: [QueryItem]) -> String {
        items.map { item in
            PercentEncoding.encodeComponent(item.name) + (item.value.map { "=" + PercentEncoding.encodeComponent($0) } ?? "")
        }.joined(separator: "&")
    }
}

public enum XCallbackError: Error, Equatable, Sendable, CustomStringConvertible {
    case notXCallback(String)

    public var description: String {
        switch self {
        case .notXCallback(let url): return "\(TerminalText.quoted(url)) is not an x-callback-url: its host must be 'x-callback-url' (SCHEME://x-callback-url/ACTION?…)"
        }
    }
}
