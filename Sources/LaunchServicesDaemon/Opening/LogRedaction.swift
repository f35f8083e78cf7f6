import LaunchServicesCore

/// URLs stay out of the log: a URL may carry a password or a token in its query
/// (`x-sadun-services:paste?…&password=…`), and the journal is readable by more than the
/// app it was meant for. Messages that quote a URL are logged with only its scheme.
enum LogRedaction {
    /// `message` with every occurrence of each URL replaced by `scheme:…`: quoted as
    /// messages quote it (`TerminalText.quoted`), with its control characters escaped, or
    /// raw. What is left has its control characters escaped, so no line of the log is forged.
    static func redact(_ message: String, urls: [String]) -> String {
        var result = message
        for url in urls where !url.isEmpty {
            let placeholder = placeholder(for: url)
            result = replace(TerminalText.quoted(url), with: "'\(placeholder)'", in: result)
            let escaped = TerminalText.escapingControls(url)
            if escaped != url { result = replace(escaped, with: placeholder, in: result) }
            result = replace(url, with: placeholder, in: result)
        }
        return TerminalText.escapingControls(result)
    }

    /// `SCHEME:…`, or `…` when the text has no scheme.
    static func placeholder(for url: String) -> String {
        guard let colon = url.firstIndex(of: ":"), let scheme = try? URLScheme(validating: String(url[..<colon])) else { return "…" }
        return "\(scheme.normalized):…"
    }

    private static func replace(_ target: String, with replacement: String, in text: String) -> String {
        let haystack = Array(text.utf8), needle = Array(target.utf8)
        guard needle.count <= haystack.count else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(haystack.count)
        var i = 0
        while i < haystack.count {
            if i + needle.count <= haystack.count, haystack[i..<(i + needle.count)].elementsEqual(needle) {
                out += replacement.utf8
                i += needle.count
            } else {
                out.append(haystack[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
