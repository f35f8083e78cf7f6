import LaunchServicesCore
import Testing

/// RFC 3986 §2.1 percent-encoding on UTF-8 bytes.
@Suite("PercentEncoding: decode and encode")
struct PercentEncodingRuleTests {
    @Test("escapes decode, in either case of hex digit, to UTF-8")
    func decode() {
        #expect(PercentEncoding.decode("Quarterly%20Report") == "Quarterly Report")
        #expect(PercentEncoding.decode("%41%62%63") == "Abc")
        #expect(PercentEncoding.decode("caf%C3%A9") == "café")
        #expect(PercentEncoding.decode("caf%c3%a9") == "café")
        #expect(PercentEncoding.decode("%F0%9F%98%80") == "😀")
        #expect(PercentEncoding.decode("%25") == "%")
        #expect(PercentEncoding.decode("%2525") == "%25", "decoding happens once")
    }

    @Test("text without escapes comes back unchanged")
    func unchanged() {
        #expect(PercentEncoding.decode("") == "")
        #expect(PercentEncoding.decode("plain-text_1.2~") == "plain-text_1.2~")
        #expect(PercentEncoding.decode("a+b") == "a+b")
    }

    @Test("malformed escapes are kept literally, not dropped", arguments: [
        ("%", "%"),
        ("100%", "100%"),
        ("%4", "%4"),
        ("a%4", "a%4"),
        ("%zz", "%zz"),
        ("%G1", "%G1"),
        ("%1G", "%1G"),
        ("%%41", "%A"),
        ("50%-off", "50%-off"),
    ])
    func malformed(text: String, decoded: String) {
        #expect(PercentEncoding.decode(text) == decoded)
    }

    @Test("an escape ending exactly at the end of the text decodes")
    func escapeAtEnd() {
        #expect(PercentEncoding.decode("a%20") == "a ")
        #expect(PercentEncoding.decode("%20") == " ")
    }

    @Test("'+' is a space only with plusAsSpace; an encoded '+' is always '+'")
    func plus() {
        #expect(PercentEncoding.decode("hello+world") == "hello+world")
        #expect(PercentEncoding.decode("hello+world", plusAsSpace: true) == "hello world")
        #expect(PercentEncoding.decode("1%2B1", plusAsSpace: true) == "1+1")
        #expect(PercentEncoding.decode("++", plusAsSpace: true) == "  ")
    }

    @Test("invalid UTF-8 after decoding is repaired with U+FFFD")
    func invalidUTF8() {
        #expect(PercentEncoding.decode("%FF") == "\u{FFFD}")
        #expect(PercentEncoding.decode("a%C3") == "a\u{FFFD}")
    }

    @Test("substrings decode like strings")
    func substring() {
        let text = "xx%20yy"
        let slice = text.dropFirst(2)
        #expect(PercentEncoding.decode(slice) == " yy")
    }

    @Test("unreserved characters are never encoded")
    func unreserved() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        #expect(PercentEncoding.encodeComponent(unreserved) == unreserved)
        for byte in unreserved.utf8 { #expect(PercentEncoding.isUnreserved(byte)) }
        for byte in " !\"#$%&'()*+,/:;<=>?@[\\]^`{|}".utf8 { #expect(!PercentEncoding.isUnreserved(byte)) }
        #expect(!PercentEncoding.isUnreserved(0x80))
        #expect(!PercentEncoding.isUnreserved(0x00))
    }

    @Test("everything else is encoded as %XX with uppercase hex, byte by byte")
    func encode() {
        #expect(PercentEncoding.encodeComponent("a b") == "a%20b")
        #expect(PercentEncoding.encodeComponent("&=?/#:+%") == "%26%3D%3F%2F%23%3A%2B%25")
        #expect(PercentEncoding.encodeComponent("é") == "%C3%A9")
        #expect(PercentEncoding.encodeComponent("\n") == "%0A")
        #expect(PercentEncoding.encodeComponent("app://done?s=1&t=2") == "app%3A%2F%2Fdone%3Fs%3D1%26t%3D2")
        #expect(PercentEncoding.encodeComponent("") == "")
    }

    @Test("decode undoes encodeComponent", arguments: [
        "", "plain", "a b+c", "100% & more = ?", "x-success=app://done?session=1#frag", "日本語 😀", "\u{0}\u{1F}\u{7F}", "%41",
    ])
    func roundTrip(text: String) {
        let encoded = PercentEncoding.encodeComponent(text)
        #expect(encoded.utf8.allSatisfy { PercentEncoding.isUnreserved($0) || $0 == UInt8(ascii: "%") })
        #expect(PercentEncoding.decode(encoded) == text)
        #expect(PercentEncoding.decode(encoded, plusAsSpace: true) == text, "an encoded '+' never becomes a space")
    }
}
