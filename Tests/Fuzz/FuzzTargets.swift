import Foundation
import LaunchServicesCore
import LaunchServicesProtocol

/// What each fuzz target feeds its input to. A target crashes (and libFuzzer reports it)
/// when a parser crashes, or when a property that must hold for every input fails: decoding
/// what was encoded gives the same value back, and a parsed value re-parses to itself.
enum FuzzTarget: String, CaseIterable {
    /// Frame length prefix, then envelope decoding; re-encoding a decoded envelope decodes to it.
    case frame
    /// The Info.plist reader: the bounds check, then PropertyListDecoder and validation.
    case plist
    /// ParsedURL, URLScheme and percent-encoding.
    case url
    /// x-callback-url requests: parse, build, replies.
    case xcallback
    /// The JSON nesting pre-check.
    case json
    /// lsopen's annotation readers (JSON, XML property lists) and the terminal escaping.
    case annotation
    /// A desktop entry's Exec line: quoting, field codes, expansion.
    case exec
    /// The desktop-entry readers: key files, desktop entries, mimeapps.list, values, Exec words.
    case desktop

    func run(_ bytes: [UInt8]) {
        switch self {
        case .frame: Self.frame(bytes)
        case .plist: Self.plist(bytes)
        case .url: Self.url(String(decoding: bytes, as: UTF8.self))
        case .xcallback: Self.xcallback(String(decoding: bytes, as: UTF8.self))
        case .json: _ = try? JSONDepth.check(bytes, limit: 64)
        case .annotation: Self.annotation(bytes)
        case .exec: Self.exec(String(decoding: bytes, as: UTF8.self))
        case .desktop: Self.desktop(bytes)
        }
    }

    /// Anything a data folder holds, read as a desktop entry, an association file and a key
    /// file: a kept value's line is a line of the file; a value's list and string agree on
    /// the text's characters; an Exec line's program is its first word.
    static func desktop(_ bytes: [UInt8]) {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).count
        if let file = try? KeyFile(parsing: bytes, maxLineBytes: 4096) {
            for group in file.groups.values {
                for (key, value) in group.values {
                    guard value.line >= 1 && value.line <= lines else { fatalError("\(key) at line \(value.line) of \(lines)") }
                    if value.stringList != nil, value.string == nil { fatalError("\(key): a list but no string") }
                    _ = (value.boolean, value.stringList?.count)
                }
            }
        }
        if let entry = try? DesktopEntry(parsing: bytes) {
            _ = (entry.type, entry.name, entry.workingDirectory, entry.hidden, entry.declaredTypes, DesktopEntryCheck.programsToFind(entry))
            if let exec = entry.exec, case .success(let words) = ShellWords.split(exec) {
                guard ShellWords.program(of: exec) == .success(words[0]) else { fatalError("program and first word differ for \(exec.debugDescription)") }
            }
        }
        if let list = try? MimeAppsList(parsing: bytes) {
            for type in list.types { _ = list.ids(in: MimeAppsList.defaultApplications, for: type) }
        }
    }

    /// What the readers accept travels on the wire and comes back the same; text escaped for
    /// a terminal holds no control character, and escaping it again changes nothing.
    static func annotation(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let escaped = TerminalText.escapingControls(text)
        guard !escaped.unicodeScalars.contains(where: TerminalText.isControl), TerminalText.escapingControls(escaped) == escaped else {
            fatalError("escaping left a control character in \(text.debugDescription)")
        }
        guard !TerminalText.quoted(text).unicodeScalars.contains(where: TerminalText.isControl) else { fatalError("quoting left a control character") }
        for value in [try? PropertyListJSON.parse(text), try? XMLPropertyListReader.read(bytes)] {
            guard let value else { continue }
            var writer = WireWriter()
            writer.plist(value)
            let encoded = writer.bytes
            let decoded = encoded.withUnsafeBytes { raw -> PropertyListValue? in
                var reader = WireReader(raw)
                return try? reader.plist(depth: 0)
            }
            guard let decoded else { fatalError("an annotation read from \(text.debugDescription) does not decode from the wire") }
            // NaN is not equal to itself; its rendering is.
            guard decoded == value || "\(decoded)" == "\(value)" else { fatalError("the wire changed \(value) into \(decoded)") }
        }
    }

    static func frame(_ bytes: [UInt8]) {
        let length = try? bytes.withUnsafeBytes { (raw) throws(WireError) in try Frame.declaredLength(raw, limit: Frame.defaultMaximumLength) }
        // The one splitter every reader calls must cut exactly what the prefix declares.
        let body = try? bytes.withUnsafeBytes { (raw) throws(WireError) in try Frame.nextBody(raw, limit: Frame.defaultMaximumLength) }
        if let length = length ?? nil, bytes.count >= Frame.headerLength + length {
            guard body == Frame.headerLength ..< Frame.headerLength + length else { fatalError("the splitter cut \(String(describing: body)) where the prefix declares \(length) bytes") }
            _ = try? Envelope.decode(Array(bytes[Frame.headerLength ..< Frame.headerLength + length]))
        } else if let body = body ?? nil {
            fatalError("the splitter cut \(body) from a frame that has not all arrived")
        }
        guard let envelope = try? Envelope.decode(bytes) else { return }
        let again = Array(Frame.encode(envelope).dropFirst(Frame.headerLength))
        guard let decoded = try? Envelope.decode(again) else { fatalError("a re-encoded envelope does not decode: \(envelope)") }
        // NaN is not equal to itself; its rendering is.
        guard decoded == envelope || "\(decoded)" == "\(envelope)" else { fatalError("round trip changed \(envelope) into \(decoded)") }
    }

    static func plist(_ bytes: [UInt8]) {
        guard (try? PropertyListBounds.check(bytes)) != nil else { return }
        guard let plist = try? PropertyListDecoder().decode(InfoPlist.self, from: Data(bytes)) else { return }
        _ = try? AppBundle(validating: plist, path: "/fuzz/App.app")
    }

    static func url(_ text: String) {
        let prefix = String(text.prefix { $0 != ":" })
        if let scheme = try? URLScheme(validating: prefix) {
            guard (try? URLScheme(validating: scheme.normalized)) == scheme else { fatalError("scheme \(scheme) does not re-validate to itself") }
        }
        guard PercentEncoding.decode(PercentEncoding.encodeComponent(text)) == text else { fatalError("percent-encoding does not round-trip \(text.debugDescription)") }
        guard let url = try? ParsedURL(text) else { return }
        _ = (url.host, url.port, url.path, url.query, url.fragment, url.queryItems(), url.queryItems(plusAsSpace: true))
        guard (try? ParsedURL(url.string)) == url else { fatalError("\(text.debugDescription) does not re-parse to itself") }
    }

    static func xcallback(_ text: String) {
        guard let url = try? ParsedURL(text), let request = try? XCallbackRequest(url) else { return }
        _ = (request.successReply([QueryItem(name: "r", value: "v")]), request.errorReply(code: "1", message: "m"), request.cancelReply)
        let built = request.url
        guard built.utf8.count <= ParsedURL.maximumLength else { return }
        guard let reparsed = try? ParsedURL(built), let again = try? XCallbackRequest(reparsed) else { fatalError("built URL \(built.debugDescription) does not parse") }
        guard again == request else { fatalError("x-callback round trip changed \(request) into \(again) via \(built.debugDescription)") }
    }

    /// An accepted Exec line expands without failing for any non-file URL it takes as a
    /// URL, that URL arriving whole in an argument; and its arguments, quoted again by the
    /// specification's rules, read back the same.
    static func exec(_ text: String) {
        guard let line = try? ExecLine(parsing: text) else { return }
        let url = "x-fuzz://a b/\"q\" 'r';$(x)`y`#z%u"
        if line.takesURLs && !line.takesFiles {
            guard let commands = try? line.commands(for: [url], values: ExecValues(icon: "i", name: "n", location: "/l")) else {
                fatalError("\(text.debugDescription) refused a URL")
            }
            // By bytes, not by Character: a combining mark after the URL makes its last
            // Character another one, though every byte of the URL is there.
            let urlBytes = Array(url.utf8)
            guard commands.allSatisfy({ $0.contains { Array($0.utf8).firstRange(of: urlBytes) != nil } }) else {
                fatalError("\(text.debugDescription) lost the URL: \(commands)")
            }
        }
        guard let plain = try? line.commands(for: []), plain.count == 1 else { fatalError("\(text.debugDescription) does not expand without URLs") }
        // By scalar, not by Character: `%` and a combining mark after it are one Character.
        let quoted = plain[0].map { argument in
            var out = "\""
            for scalar in argument.unicodeScalars {
                if "\"`$\\".unicodeScalars.contains(scalar) { out += "\\" }
                out.unicodeScalars.append(scalar)
                if scalar == "%" { out += "%" }
            }
            return out + "\""
        }.joined(separator: " ")
        guard (try? ExecLine(parsing: quoted).commands(for: [])) == plain else { fatalError("\(plain) does not survive quoting as \(quoted.debugDescription)") }
    }
}
