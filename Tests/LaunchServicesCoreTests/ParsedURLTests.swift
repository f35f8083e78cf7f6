import LaunchServicesCore
import Testing

/// `ParsedURL`: RFC 3986 components without Foundation, and every way a URL is refused.
@Suite("ParsedURL: components, query items and refusals")
struct ParsedURLComponentTests {
    /// The error `ParsedURL(_:)` throws for `text`, or `nil` when it is accepted.
    func refusal(_ text: String) -> URLError? {
        do {
            _ = try ParsedURL(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("Apple's todolist example: host, decoded query and fragment")
    func appleExample() throws {
        let text = "todolist://www.acme.com?Quarterly%20Report#200806231300"
        let url = try ParsedURL(text)
        #expect(url.string == text)
        #expect(url.description == text)
        #expect(url.scheme == (try URLScheme(validating: "todolist")))
        #expect(url.rawAuthority == "www.acme.com")
        #expect(url.host == "www.acme.com")
        #expect(url.port == nil)
        #expect(url.rawPath == "")
        #expect(url.path == "")
        #expect(url.rawQuery == "Quarterly%20Report")
        #expect(url.query == "Quarterly Report")
        #expect(url.rawFragment == "200806231300")
        #expect(url.fragment == "200806231300")
        #expect(url.queryItems() == [QueryItem(name: "Quarterly Report", value: nil)])
    }

    @Test("a URL without an authority (xyz:hello): no host, the rest is the path")
    func opaque() throws {
        let url = try ParsedURL("xyz:hello")
        #expect(url.scheme.normalized == "xyz")
        #expect(url.rawAuthority == nil)
        #expect(url.host == nil)
        #expect(url.port == nil)
        #expect(url.path == "hello")
        #expect(url.query == nil)
        #expect(url.fragment == nil)
        #expect(url.queryItems().isEmpty)
    }

    @Test("an opaque URL keeps its query and fragment")
    func opaqueWithQuery() throws {
        let url = try ParsedURL("mailto:someone@example.com?subject=Hi%20there#top")
        #expect(url.host == nil)
        #expect(url.path == "someone@example.com")
        #expect(url.queryValue("subject") == "Hi there")
        #expect(url.fragment == "top")
    }

    @Test("the scheme is normalised; the text is kept byte for byte")
    func schemeCase() throws {
        let url = try ParsedURL("ToDoList://Host/Path%2FEncoded")
        #expect(url.scheme.normalized == "todolist")
        #expect(url.string == "ToDoList://Host/Path%2FEncoded")
        #expect(url.host == "Host")
        #expect(url.rawPath == "/Path%2FEncoded")
        #expect(url.path == "/Path/Encoded")
    }

    @Test("an empty authority is present but empty; no path")
    func emptyAuthority() throws {
        let url = try ParsedURL("xyz://")
        #expect(url.rawAuthority == "")
        #expect(url.host == "")
        #expect(url.path == "")
        let withPath = try ParsedURL("file:///etc/hosts")
        #expect(withPath.host == "")
        #expect(withPath.path == "/etc/hosts")
    }

    @Test("userinfo and port: host is what follows the last '@', port what follows the last ':'")
    func userinfoAndPort() throws {
        let url = try ParsedURL("ftp://user:pa%40ss@files.example.com:2121/dir/file%20name.txt")
        #expect(url.rawAuthority == "user:pa%40ss@files.example.com:2121")
        #expect(url.host == "files.example.com")
        #expect(url.port == 2121)
        #expect(url.path == "/dir/file name.txt")

        let noPort = try ParsedURL("x://me@host")
        #expect(noPort.host == "host")
        #expect(noPort.port == nil)

        let emptyPort = try ParsedURL("x://host:/p")
        #expect(emptyPort.host == "host")
        #expect(emptyPort.port == nil)

        let badPort = try ParsedURL("x://host:http/p")
        #expect(badPort.host == "host")
        #expect(badPort.port == nil)
    }

    @Test("IPv6 literal hosts lose their brackets; a port after ']' is read")
    func ipv6() throws {
        let withPort = try ParsedURL("http://[::1]:8080/index")
        #expect(withPort.host == "::1")
        #expect(withPort.port == 8080)
        #expect(withPort.path == "/index")

        let bare = try ParsedURL("http://[2001:db8::7]")
        #expect(bare.host == "2001:db8::7")
        #expect(bare.port == nil, "the colons inside the brackets are not a port")

        let user = try ParsedURL("ssh://git@[fe80::1]:22")
        #expect(user.host == "fe80::1")
        #expect(user.port == 22)
    }

    @Test("a percent-encoded host is decoded")
    func encodedHost() throws {
        #expect(try ParsedURL("x://my%20host:1/").host == "my host")
    }

    @Test("'#' ends the query; '?' inside the fragment or the query is data")
    func delimiters() throws {
        let fragmentFirst = try ParsedURL("x://h/p#frag?not-a-query")
        #expect(fragmentFirst.query == nil)
        #expect(fragmentFirst.fragment == "frag?not-a-query")
        #expect(fragmentFirst.path == "/p")

        let twoQuestions = try ParsedURL("x:p?a=1?b=2")
        #expect(twoQuestions.rawQuery == "a=1?b=2")
        #expect(twoQuestions.queryItems() == [QueryItem(name: "a", value: "1?b=2")])

        let slashInQuery = try ParsedURL("x://h?next=/a/b")
        #expect(slashInQuery.rawAuthority == "h")
        #expect(slashInQuery.path == "")
        #expect(slashInQuery.queryValue("next") == "/a/b")

        let emptyQueryAndFragment = try ParsedURL("x://h/?#")
        #expect(emptyQueryAndFragment.query == "")
        #expect(emptyQueryAndFragment.fragment == "")
        #expect(emptyQueryAndFragment.queryItems().isEmpty)
    }

    @Test("non-ASCII characters are accepted and kept")
    func nonASCII() throws {
        let url = try ParsedURL("x://h/café?q=日本")
        #expect(url.path == "/café")
        #expect(url.queryValue("q") == "日本")
        #expect(try ParsedURL("x://h/caf%C3%A9").path == "/café")
    }

    @Test("query items are decoded one by one, so encoded '&' and '=' stay inside values")
    func queryItems() throws {
        let url = try ParsedURL("x://h?title=Tom%20%26%20Jerry&eq=a%3Db%3Dc&empty=&flag&n%20ame=v&callback=app%3A%2F%2Fdone%3Fs%3D1%26t%3D2")
        #expect(url.queryItems() == [
            QueryItem(name: "title", value: "Tom & Jerry"),
            QueryItem(name: "eq", value: "a=b=c"),
            QueryItem(name: "empty", value: ""),
            QueryItem(name: "flag", value: nil),
            QueryItem(name: "n ame", value: "v"),
            QueryItem(name: "callback", value: "app://done?s=1&t=2"),
        ])
        #expect(url.queryValue("title") == "Tom & Jerry")
        #expect(url.queryValue("flag") == nil)
        #expect(url.queryValue("missing") == nil)
    }

    @Test("a literal '=' after the first belongs to the value")
    func literalEquals() throws {
        #expect(try ParsedURL("x:?k=a=b").queryItems() == [QueryItem(name: "k", value: "a=b")])
    }

    @Test("empty pairs are skipped; repeated names keep their order; queryValue takes the first")
    func repeatedAndEmpty() throws {
        let url = try ParsedURL("x://h?&&a=1&&a=2&b=3&")
        #expect(url.queryItems() == [QueryItem(name: "a", value: "1"), QueryItem(name: "a", value: "2"), QueryItem(name: "b", value: "3")])
        #expect(url.queryValue("a") == "1")
    }

    @Test("'+' is kept unless plusAsSpace; an encoded %2B stays '+' either way")
    func plusAsSpace() throws {
        let url = try ParsedURL("x://h?data=hello+world&plus=1%2B1+2&name+x=y")
        #expect(url.queryValue("data") == "hello+world")
        #expect(url.queryValue("data", plusAsSpace: true) == "hello world")
        #expect(url.queryValue("plus") == "1+1+2")
        #expect(url.queryValue("plus", plusAsSpace: true) == "1+1 2")
        #expect(url.queryItems(plusAsSpace: true).last == QueryItem(name: "name x", value: "y"))
        #expect(url.query == "data=hello+world&plus=1+1+2&name+x=y", "the whole query never turns '+' into a space")
    }

    @Test("the empty URL")
    func empty() {
        #expect(refusal("") == .empty)
        #expect(URLError.empty.description == "the URL is empty")
    }

    @Test("spaces and control characters are refused with their code point", arguments: [
        ("xyz://a b", UInt32(0x20)),
        ("xyz://a\tb", 0x09),
        ("xyz://a\nb", 0x0A),
        ("xyz://ab\r", 0x0D),
        ("xyz://\u{0}", 0x00),
        ("xyz://a\u{7F}", 0x7F),
        (" xyz://a", 0x20),
    ])
    func invalidCharacter(text: String, code: UInt32) throws {
        let error = try #require(refusal(text))
        #expect(error == .invalidCharacter(text, code))
        #expect(error.description.contains("URL \(TerminalText.quoted(text))"), "quoted, control characters escaped: \(error)")
        #expect(!error.description.unicodeScalars.contains(where: TerminalText.isControl))
        #expect(error.description.contains("(U+\(String(code, radix: 16, uppercase: true)))"), "\(error)")
        #expect(error.description.contains("%20"), "the message says how to encode a space")
    }

    @Test("a URL without ':' has no scheme", arguments: ["no-scheme-here", "/path/only", "www.example.com", "a"])
    func missingScheme(text: String) throws {
        let error = try #require(refusal(text))
        #expect(error == .missingScheme(text))
        #expect(error.description.contains("URL '\(text)' has no scheme"))
    }

    @Test("a bad scheme is refused, carrying the scheme's own error")
    func invalidScheme() throws {
        #expect(refusal(":nothing") == .invalidScheme(":nothing", .empty))
        #expect(refusal("1x://y") == .invalidScheme("1x://y", .mustStartWithLetter("1x")))
        #expect(refusal("a_b:c") == .invalidScheme("a_b:c", .invalidCharacter("a_b", "_")))
        #expect(refusal("/a:b") == .invalidScheme("/a:b", .mustStartWithLetter("/a")), "the first ':' ends the scheme")
        let error = try #require(refusal("my_app://open"))
        #expect(error.description.contains("URL 'my_app://open'"))
        #expect(error.description.contains("scheme 'my_app'"))
        #expect(error.description.contains("'_'"))
    }

    @Test("the length limit is in UTF-8 bytes: exactly the limit is accepted, one more byte is not")
    func tooLong() throws {
        let limit = ParsedURL.maximumLength
        #expect(limit == 32 * 1024)
        let atLimit = "x:" + String(repeating: "a", count: limit - 2)
        #expect(try ParsedURL(atLimit).path.utf8.count == limit - 2)
        let over = atLimit + "b"
        #expect(refusal(over) == .tooLong(length: limit + 1, limit: limit))
        // Multi-byte characters count by their bytes: "é" is two.
        let multiByte = "x:" + String(repeating: "é", count: limit / 2)
        #expect(multiByte.count < limit)
        #expect(refusal(multiByte) == .tooLong(length: multiByte.utf8.count, limit: limit))
        #expect(URLError.tooLong(length: 40000, limit: limit).description == "the URL is 40000 bytes long; the limit is 32768")
    }

    @Test("length is checked before anything else")
    func lengthFirst() {
        let over = String(repeating: " ", count: ParsedURL.maximumLength + 1)
        #expect(refusal(over) == .tooLong(length: ParsedURL.maximumLength + 1, limit: ParsedURL.maximumLength))
    }

    @Test("parsed URLs are equal when their text is equal")
    func equality() throws {
        #expect(try ParsedURL("x://a") == ParsedURL("x://a"))
        #expect(try ParsedURL("x://a") != ParsedURL("X://a"), "the original spelling is part of the value")
    }
}
