/// The local path a `file:` URL names, for the `%f` and `%F` field codes, following what
/// GLib's `g_filename_from_uri` accepts: `file:///p`, `file://localhost/p` and `file:/p`;
/// no other host; no fragment (`#`); `%XX` escapes decoded, but never to NUL or `/`.
///
/// An argument is a Swift string here, so a path whose decoded bytes are not UTF-8 is
/// refused too (GLib would pass the raw bytes); every refusal says why.
public enum FileURLPath {
    /// Why a URL names no local file.
    public struct NotLocal: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
        public init(reason: String) { self.reason = reason }
    }

    public static func path(of url: String) throws(NotLocal) -> String {
        let bytes = Array(url.utf8)
        let prefix = Array("file:".utf8)
        guard bytes.count >= prefix.count,
              zip(bytes.prefix(prefix.count), prefix).allSatisfy({ $0.0 == $0.1 || (URLScheme.isAlpha($0.0) && $0.0 | 0x20 == $0.1) }) else {
            throw NotLocal(reason: "it is not a file: URL")
        }
        var rest = bytes[prefix.count...]
        if rest.starts(with: [0x2F, 0x2F]) {
            rest = rest.dropFirst(2)
            let hostEnd = rest.firstIndex(of: 0x2F) ?? rest.endIndex
            let host = String(decoding: rest[rest.startIndex..<hostEnd], as: UTF8.self)
            guard host.isEmpty || host.lowercased() == "localhost" else {
                throw NotLocal(reason: "it names the host \(TerminalText.quoted(host)), not this machine")
            }
            rest = rest[hostEnd...]
        }
        guard rest.first == 0x2F else { throw NotLocal(reason: "it has no absolute path") }
        guard !rest.contains(0x23) else { throw NotLocal(reason: "a local file URL may not carry a fragment (#)") }
        var path: [UInt8] = []
        path.reserveCapacity(rest.count)
        var i = rest.startIndex
        while i < rest.endIndex {
            let byte = rest[i]
            guard byte == 0x25 else {
                path.append(byte)
                i += 1
                continue
            }
            guard i + 2 < rest.endIndex, let high = PercentEncoding.hexValue(rest[i + 1]), let low = PercentEncoding.hexValue(rest[i + 2]) else {
                throw NotLocal(reason: "it has a malformed %-escape")
            }
            let decoded = high << 4 | low
            guard decoded != 0 else { throw NotLocal(reason: "it encodes a NUL byte (%00)") }
            guard decoded != 0x2F else { throw NotLocal(reason: "it encodes a slash (%2F) inside a path segment") }
            path.append(decoded)
            i += 3
        }
        guard let text = String(validating: path, as: UTF8.self) else {
            throw NotLocal(reason: "its decoded path is not UTF-8")
        }
        return text
    }
}
