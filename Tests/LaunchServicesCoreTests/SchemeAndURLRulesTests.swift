import LaunchServicesCore
import Testing

@Suite("Scheme rules (RFC 3986)")
struct SchemeRulesTests {
    @Test("valid schemes normalise to lowercase", arguments: [
        ("xyz", "xyz"), ("TodoList", "todolist"), ("x-sadun-services", "x-sadun-services"), ("a+b.c-1", "a+b.c-1"), ("Z", "z"),
    ])
    func valid(text: String, normalized: String) throws {
        #expect(try URLScheme(validating: text).normalized == normalized)
    }

    @Test("schemes match case-insensitively")
    func caseInsensitive() throws {
        #expect(try URLScheme(validating: "XYZ") == URLScheme(validating: "xyz"))
    }

    @Test("every refusal names the offending text")
    func invalid() {
        #expect(throws: SchemeError.empty) { try URLScheme(validating: "") }
        #expect(throws: SchemeError.mustStartWithLetter("1abc")) { try URLScheme(validating: "1abc") }
        #expect(throws: SchemeError.mustStartWithLetter("+x")) { try URLScheme(validating: "+x") }
        #expect(throws: SchemeError.invalidCharacter("a_b", "_")) { try URLScheme(validating: "a_b") }
        #expect(throws: SchemeError.invalidCharacter("a b", " ")) { try URLScheme(validating: "a b") }
        #expect(SchemeError.invalidCharacter("a_b", "_").description.contains("'a_b'"))
        #expect(SchemeError.mustStartWithLetter("1abc").description.contains("'1abc'"))
        #expect(SchemeError.invalidCharacter("a b", " ").description.contains("U+20"))
    }
}

@Suite("URL parsing without Foundation")
struct ParsedURLTests {
    @Test("Apple's todolist example: host, decoded query, fragment")
    func appleExample() throws {
        let url = try ParsedURL("todolist://www.acme.com?Quarterly%20Report#200806231300")
        #expect(url.scheme.normalized == "todolist")
        #expect(url.host == "www.acme.com")
        #expect(url.query == "Quarterly Report")
        #expect(url.fragment == "200806231300")
        #expect(url.path == "")
        #expect(url.string == "todolist://www.acme.com?Quarterly%20Report#200806231300")
    }

    @Test("opaque URLs have no host; the rest is the path")
    func opaque() throws {
        let url = try ParsedURL("xyz:hello")
        #expect(url.host == nil)
        #expect(url.path == "hello")
        #expect(url.query == nil)
        #expect(url.fragment == nil)
    }

    @Test("userinfo, port, IPv6 hosts and decoded paths")
    func authority() throws {
        let a = try ParsedURL("xyz://user:pw@Example.org:8080/a%20b/c?x")
        #expect(a.host == "Example.org")
        #expect(a.port == 8080)
        #expect(a.path == "/a b/c")
        let b = try ParsedURL("xyz://[::1]:99/p")
        #expect(b.host == "::1")
        #expect(b.port == 99)
        let c = try ParsedURL("xyz://host")
        #expect(c.port == nil)
        #expect(c.path == "")
    }

    @Test("query items decode separately, keeping encoded & and = inside values")
    func queryItems() throws {
        let url = try ParsedURL("x://h?a=1&b=x%26y%3Dz&flag&data=hello+world&&e=")
        let items = url.queryItems()
        #expect(items == [
            QueryItem(name: "a", value: "1"), QueryItem(name: "b", value: "x&y=z"), QueryItem(name: "flag", value: nil),
            QueryItem(name: "data", value: "hello+world"), QueryItem(name: "e", value: ""),
        ])
        #expect(url.queryValue("data", plusAsSpace: true) == "hello world")
        #expect(url.queryValue("missing") == nil)
    }

    @Test("every URL refusal names what is wrong")
    func invalid() {
        #expect(throws: URLError.empty) { try ParsedURL("") }
        #expect(throws: URLError.missingScheme("justtext")) { try ParsedURL("justtext") }
        #expect(throws: URLError.invalidCharacter("a b:c", 0x20)) { try ParsedURL("a b:c") }
        #expect(throws: URLError.invalidCharacter("x:\n", 0x0A)) { try ParsedURL("x:\n") }
        #expect(throws: URLError.invalidScheme("1x:y", .mustStartWithLetter("1x"))) { try ParsedURL("1x:y") }
        let long = "x:" + String(repeating: "a", count: ParsedURL.maximumLength)
        #expect(throws: URLError.tooLong(length: long.utf8.count, limit: ParsedURL.maximumLength)) { try ParsedURL(long) }
        #expect(URLError.missingScheme("justtext").description.contains("'justtext'"))
        #expect(URLError.invalidCharacter("a b:c", 0x20).description.contains("%20"))
    }
}

@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test("decode and encode are inverse, on UTF-8")
    func roundTrip() {
        for text in ["hello world", "a&b=c?d#e/f", "snowman ☃", "100%", "x-callback-url://y?z=1"] {
            #expect(PercentEncoding.decode(PercentEncoding.encodeComponent(text)) == text)
        }
        #expect(PercentEncoding.encodeComponent("a b&c") == "a%20b%26c")
        #expect(PercentEncoding.encodeComponent("Az09-._~") == "Az09-._~")
    }

    @Test("malformed escapes are kept, not dropped; + is a space only when asked")
    func malformed() {
        #expect(PercentEncoding.decode("100%") == "100%")
        #expect(PercentEncoding.decode("%zz%4") == "%zz%4")
        #expect(PercentEncoding.decode("%41%62") == "Ab")
        #expect(PercentEncoding.decode("a+b") == "a+b")
        #expect(PercentEncoding.decode("a+b", plusAsSpace: true) == "a b")
    }
}
