import class Foundation.ProcessInfo
import LaunchServicesCore
import Testing

/// `ParsedURL(_:)` finds its delimiters byte by byte. Before, it searched by `Character`;
/// that search is kept here as the reference, and the two must split every generated URL the
/// same way, byte for byte, or refuse it with the same error. They may differ only where a
/// delimiter shares a grapheme cluster with a neighbour (`#` followed by a combining acute):
/// the `Character` search did not see the delimiter there, the byte search does, as RFC 3986
/// means it (its delimiters are ASCII characters).
@Suite("ParsedURL: the byte search equals the Character search on generated URLs")
struct ParsedURLDifferentialTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["LS_PARSED_URL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)

    /// The components as bytes (a `Substring`'s `==` compares canonically equivalent text
    /// as equal, which would hide a split in a different place), or the refusal.
    enum Split: Equatable, CustomStringConvertible {
        case parsed(scheme: String, authority: [UInt8]?, path: [UInt8], query: [UInt8]?, fragment: [UInt8]?)
        case refused(LaunchServicesCore.URLError)

        var description: String {
            switch self {
            case .parsed(let scheme, let authority, let path, let query, let fragment):
                func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "nil" }
                return "\(scheme) authority \(text(authority)) path \(text(path)) query \(text(query)) fragment \(text(fragment))"
            case .refused(let error): return "refused: \(error)"
            }
        }
    }

    static func split(_ text: String) -> Split {
        do {
            let url = try ParsedURL(text)
            return .parsed(scheme: url.scheme.normalized, authority: url.rawAuthority.map { Array($0.utf8) }, path: Array(url.rawPath.utf8),
                           query: url.rawQuery.map { Array($0.utf8) }, fragment: url.rawFragment.map { Array($0.utf8) })
        } catch {
            return .refused(error)
        }
    }

    /// The previous `ParsedURL(_:)`, searching by `Character`.
    static func referenceSplit(_ text: String) -> Split {
        guard !text.isEmpty else { return .refused(.empty) }
        guard text.utf8.count <= ParsedURL.maximumLength else { return .refused(.tooLong(length: text.utf8.count, limit: ParsedURL.maximumLength)) }
        for scalar in text.unicodeScalars where scalar.value < 0x21 || scalar.value == 0x7F {
            return .refused(.invalidCharacter(text, scalar.value))
        }
        guard let colon = text.firstIndex(of: ":") else { return .refused(.missingScheme(text)) }
        let scheme: URLScheme
        do {
            scheme = try URLScheme(validating: String(text[..<colon]))
        } catch {
            return .refused(.invalidScheme(text, error))
        }
        var rest = text[text.index(after: colon)...]
        var fragment: Substring?
        var query: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        var authority: Substring?
        var path = rest
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let authorityEnd = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            authority = rest[afterSlashes..<authorityEnd]
            path = rest[authorityEnd...]
        }
        return .parsed(scheme: scheme.normalized, authority: authority.map { Array($0.utf8) }, path: Array(path.utf8),
                       query: query.map { Array($0.utf8) }, fragment: fragment.map { Array($0.utf8) })
    }

    /// Whether a delimiter of the URL syntax sits in a grapheme cluster of more than one scalar.
    static func hidesDelimiter(_ text: String) -> Bool {
        text.contains { character in
            character.unicodeScalars.count > 1 && character.unicodeScalars.contains { ":/?#".unicodeScalars.contains($0) }
        }
    }

    /// Pieces URLs are made of: scheme characters, every delimiter, percent escapes, text
    /// from beyond ASCII (precomposed, CJK, an emoji, a flag), marks that join the character
    /// before them (combining acute, ZWJ, a variation selector) or the one after (U+0600,
    /// a prepended mark), and now and then a control character or a space.
    static let pieces: [String] = [
        "a", "x", "Z", "q", "0", "7", "+", "-", ".", ":", ":", "/", "/", "//", "?", "#", "@", "[", "]", "=", "&", "%20", "%2F", "%", "%zz",
        "é", "日本", "😀", "🇫🇷", "~", "_", "!", "$", "'", "(", ")", "*", ",", ";",
    ]
    static let rare: [String] = [" ", "\u{7F}", "\t", "\u{0}", "\u{85}", "\u{301}", "\u{200D}", "\u{FE0F}", "\u{600}"]

    static func generated(_ random: inout SeededGenerator) -> String {
        var text = ""
        // Most URLs begin with a scheme and a colon, so the rest of the syntax is reached.
        if Int.random(in: 0..<10, using: &random) < 8 {
            text += ["xyz", "todolist", "X-Sadun.1", "a+b", "9bad", "xyz", "ma\u{301}il"].randomElement(using: &random)!
            text += [":", ":", ":", "://", "://", ":/", ":\u{301}"].randomElement(using: &random)!
        }
        for _ in 0..<Int.random(in: 0..<14, using: &random) {
            text += Int.random(in: 0..<40, using: &random) == 0 ? rare.randomElement(using: &random)! : pieces.randomElement(using: &random)!
        }
        return text
    }

    @Test("20,000 generated URLs split alike, except where a delimiter is hidden in a grapheme cluster")
    func generatedURLs() {
        print("ParsedURLDifferentialTests seed \(Self.seed) (LS_PARSED_URL_SEED replays)")
        var random = SeededGenerator(seed: Self.seed)
        var parsed = 0
        var hidden = 0
        for _ in 0..<20_000 {
            let text = Self.generated(&random)
            let new = Self.split(text)
            let old = Self.referenceSplit(text)
            if case .parsed = new { parsed += 1 }
            if new != old {
                #expect(Self.hidesDelimiter(text), "\(text.debugDescription): \(new) but the Character search: \(old) (seed \(Self.seed))")
                hidden += 1
            }
            // Either way the byte split is RFC 3986's: the parts put back together are the
            // text, and no part holds a delimiter that should have ended it.
            if case .parsed(_, let authority, let path, let query, let fragment) = new {
                var whole = Array(text.utf8[..<text.utf8.firstIndex(of: UInt8(ascii: ":"))!]) + [UInt8(ascii: ":")]
                if let authority { whole += Array("//".utf8) + authority }
                whole += path
                if let query { whole += [UInt8(ascii: "?")] + query }
                if let fragment { whole += [UInt8(ascii: "#")] + fragment }
                #expect(whole == Array(text.utf8), "\(text.debugDescription): \(new) (seed \(Self.seed))")
                #expect(!(authority ?? []).contains { "/?#".utf8.contains($0) } && !path.contains { "?#".utf8.contains($0) }
                            && !(query ?? []).contains(UInt8(ascii: "#")), "\(text.debugDescription): \(new) (seed \(Self.seed))")
                #expect(authority != nil || !path.starts(with: Array("//".utf8)), "\(text.debugDescription): \(new) (seed \(Self.seed))")
            }
        }
        print("ParsedURLDifferentialTests: \(parsed) of 20,000 parsed; \(hidden) split differently, each where a delimiter shares a grapheme cluster")
        // The generator must reach the syntax, not only its refusals.
        #expect(parsed > 5_000)
    }

    @Test("a delimiter followed by a combining mark is still a delimiter")
    func combiningMarkAfterADelimiter() throws {
        let url = try ParsedURL("xyz://host/a?q\u{301}=1#\u{301}top")
        #expect(url.rawAuthority == "host")
        #expect(Array(url.rawPath.utf8) == Array("/a".utf8))
        #expect(Array(url.rawQuery!.utf8) == Array("q\u{301}=1".utf8))
        #expect(Array(url.rawFragment!.utf8) == Array("\u{301}top".utf8))
        let opaque = try ParsedURL("xyz:\u{301}hello")
        #expect(Array(opaque.rawPath.utf8) == Array("\u{301}hello".utf8))
        #expect(opaque.path == "\u{301}hello")
    }

    @Test("the edges of the authority: '//' alone, before a query, before a fragment, and '/' after it")
    func authorityEdges() throws {
        for (text, authority, path) in [("xyz://", "", ""), ("xyz://?q", "", ""), ("xyz://#f", "", ""), ("xyz:///", "", "/"),
                                        ("xyz://h/p/q", "h", "/p/q"), ("xyz:/h", nil, "/h"), ("xyz:/", nil, "/"), ("xyz:h//x", nil, "h//x"),
                                        ("xyz:?//", nil, ""), ("xyz://a?b/c#d/e", "a", "")] as [(String, String?, String)] {
            let url = try ParsedURL(text)
            #expect(url.rawAuthority.map(String.init) == authority, "\(text)")
            #expect(String(url.rawPath) == path, "\(text)")
            #expect(Self.split(text) == Self.referenceSplit(text), "\(text)")
        }
    }
}
