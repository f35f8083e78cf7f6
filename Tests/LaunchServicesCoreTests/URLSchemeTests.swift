import LaunchServicesCore
import Testing

/// RFC 3986 §3.1: `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, matched case-insensitively.
@Suite("URLScheme: RFC 3986 rules and normalisation")
struct URLSchemeRuleTests {
    /// The error `URLScheme(validating:)` throws for `text`, or `nil` when it is accepted.
    func refusal(_ text: String) -> SchemeError? {
        do {
            _ = try URLScheme(validating: text)
            return nil
        } catch {
            return error
        }
    }

    @Test("valid schemes are accepted and lowercased", arguments: [
        ("a", "a"),
        ("Z", "z"),
        ("xyz", "xyz"),
        ("TodoList", "todolist"),
        ("svn+ssh", "svn+ssh"),
        ("coap+TCP", "coap+tcp"),
        ("x-callback", "x-callback"),
        ("com.example.App", "com.example.app"),
        ("a1", "a1"),
        ("A0+-.", "a0+-."),
        ("HTTP2", "http2"),
    ])
    func valid(text: String, normalized: String) throws {
        let scheme = try URLScheme(validating: text)
        #expect(scheme.normalized == normalized)
        #expect(scheme.description == normalized)
    }

    @Test("every letter of the ASCII alphabet may start a scheme; nothing else may")
    func firstCharacter() {
        for byte in UInt8(0x20)...UInt8(0x7E) {
            let text = String(UnicodeScalar(byte)) + "x"
            let isLetter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            if isLetter {
                #expect(refusal(text) == nil, "\(text) should be accepted")
            } else {
                #expect(refusal(text) == .mustStartWithLetter(text), "\(text) should be refused")
            }
        }
    }

    @Test("after the first letter only letters, digits, '+', '-' and '.' are allowed")
    func laterCharacters() {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.".utf8)
        for byte in UInt8(0x21)...UInt8(0x7E) {
            let character = Character(UnicodeScalar(byte))
            let text = "a" + String(character) + "b"
            if allowed.contains(byte) {
                #expect(refusal(text) == nil, "\(text) should be accepted")
            } else {
                #expect(refusal(text) == .invalidCharacter(text, character), "\(text) should be refused")
            }
        }
    }

    @Test("schemes compare, hash and sort by their lowercase form")
    func caseInsensitive() throws {
        let upper = try URLScheme(validating: "XYZ")
        let mixed = try URLScheme(validating: "xYz")
        let lower = try URLScheme(validating: "xyz")
        #expect(upper == lower)
        #expect(mixed == lower)
        #expect(Set([upper, mixed, lower]).count == 1)
        #expect([upper: 1][lower] == 1)
        #expect(try URLScheme(validating: "xyz") != URLScheme(validating: "xyz1"))
        let sorted = try ["Beta", "alpha", "GAMMA"].map { try URLScheme(validating: $0) }.sorted()
        #expect(sorted.map(\.normalized) == ["alpha", "beta", "gamma"])
        #expect(try URLScheme(validating: "B") > URLScheme(validating: "a"))
    }

    @Test("the empty scheme")
    func empty() {
        #expect(refusal("") == .empty)
        #expect(SchemeError.empty.description == "the scheme is empty")
    }

    @Test("a scheme not starting with a letter is refused, quoting it", arguments: ["1abc", "+a", "-a", ".a", "9", " a", "_x"])
    func mustStartWithLetter(text: String) throws {
        let error = try #require(refusal(text))
        #expect(error == .mustStartWithLetter(text))
        #expect(error.description.contains("'\(text)'"))
        #expect(error.description.contains("must start with a letter"))
    }

    @Test("a disallowed character is refused, quoting the scheme and the character")
    func invalidCharacter() throws {
        let cases: [(String, Character, String)] = [
            ("a_b", "_", "'_'"),
            ("my:scheme", ":", "':'"),
            ("a/b", "/", "'/'"),
            ("a%20", "%", "'%'"),
            ("x~y", "~", "'~'"),
        ]
        for (text, character, shown) in cases {
            let error = try #require(refusal(text))
            #expect(error == .invalidCharacter(text, character))
            #expect(error.description.contains("scheme '\(text)'"), "\(error)")
            #expect(error.description.contains("contains \(shown)"), "\(error)")
            #expect(error.description.contains("RFC 3986"))
        }
    }

    @Test("whitespace and control characters are shown as code points, not raw")
    func invisibleCharacters() throws {
        let space = try #require(refusal("a b"))
        #expect(space == .invalidCharacter("a b", " "))
        #expect(space.description.contains("contains U+20;"), "\(space)")
        let tab = try #require(refusal("a\tb"))
        #expect(tab == .invalidCharacter("a\tb", "\t"))
        #expect(tab.description.contains("contains U+9;"), "\(tab)")
        #expect(refusal("a\u{7F}") == .invalidCharacter("a\u{7F}", "\u{7F}"))
    }

    @Test("only the first disallowed character is reported")
    func firstOffender() {
        #expect(refusal("ab_c d") == .invalidCharacter("ab_c d", "_"))
    }

    @Test("a non-ASCII first character is refused as not a letter")
    func nonASCIIFirst() {
        #expect(refusal("éclair") == .mustStartWithLetter("éclair"))
    }

    @Test("a non-ASCII character later in the scheme is named as itself")
    func nonASCIILater() throws {
        let error = try #require(refusal("café"))
        #expect(error == .invalidCharacter("café", "é"))
        #expect(error.description.contains("contains 'é' (U+E9)"), "\(error)")
        let decomposed = try #require(refusal("cafe\u{301}"))
        #expect(decomposed.description.contains("(U+65 U+301)"), "a combining sequence is named whole: \(decomposed)")
        #expect(try #require(refusal("a\u{7F}")).description.contains("contains U+7F;"), "DEL is not printed raw")
    }

}
