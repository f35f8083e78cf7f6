import LaunchServicesCore
import Testing

/// Text from elsewhere (URLs, paths, apps' words) is shown with every character a terminal
/// would act on escaped, so what is read is exactly what was sent.
@Suite struct TerminalTextTests {
    @Test("quoted: quotes, escapes backslash and quote, and writes each control character as an escape", arguments: [
        ("xyz:hello", "'xyz:hello'"), ("a\nb", #"'a\nb'"#), ("a\u{1B}[2Jb", #"'a\x1B[2Jb'"#), ("\r\t", #"'\r\t'"#),
        ("c\u{9B}31m", #"'c\x9B31m'"#), ("x\u{7F}\u{0}", #"'x\x7F\x00'"#), ("l\u{2028}r\u{202E}", #"'l\u{2028}r\u{202E}'"#),
        ("it's", #"'it\'s'"#), (#"back\slash"#, #"'back\\slash'"#), ("né😀", "'né😀'"),
    ])
    func quoted(_ text: String, _ shown: String) {
        #expect(TerminalText.quoted(text) == shown)
    }

    @Test("escapingControls changes only control characters, so escaping twice changes nothing more")
    func escapingControls() {
        let text = "bundle /apps/a\u{1B}]0;x\u{7}.app: 'q' \\ é"
        let once = TerminalText.escapingControls(text)
        #expect(once == #"bundle /apps/a\x1B]0;x\x07.app: 'q' \ é"#)
        #expect(TerminalText.escapingControls(once) == once)
        #expect(!once.unicodeScalars.contains(where: TerminalText.isControl))
    }

    @Test("URL errors quote the URL escaped")
    func urlErrors() throws {
        #expect(throws: URLError.self) { try ParsedURL("xyz:a\u{1B}b") }
        do {
            _ = try ParsedURL("xyz:a\u{1B}[31mb")
        } catch {
            #expect(error.description.hasPrefix(#"URL 'xyz:a\x1B[31mb' contains a space or control character"#), "\(error)")
        }
        do {
            _ = try ParsedURL("a\u{9B}b:x")
        } catch {
            #expect(error.description.contains(#"scheme 'a\x9Bb'"#), "\(error)")
        }
    }

    @Test("JSON strings escape every control character, C1 and separators included")
    func json() {
        #expect(JSONText.quote("a\u{9B}b\u{2028}\u{1B}") == #""a\u009bb\u2028\u001b""#)
    }

    @Test("a JSON document from elsewhere: the controls JSON lets through raw become \\u escapes, nothing else changes")
    func jsonDocument() {
        let document = "{\"name\": \"a\u{9B}b\u{202E}c\u{7F}\",\n \"é😀\": [1, \"\\n\"]}"
        #expect(JSONText.escapingTerminalControls(document) == "{\"name\": \"a\\u009bb\\u202ec\\u007f\",\n \"é😀\": [1, \"\\n\"]}",
                "the newline between tokens is JSON's whitespace and stays")
        #expect(JSONText.escapingTerminalControls("[\"plain\"]") == "[\"plain\"]")
        #expect(JSONText.unicodeEscape("\u{1B}") == #"\u001b"#)
        #expect(JSONText.unicodeEscape("😀") == #"\ud83d\ude00"#, "beyond U+FFFF: a surrogate pair")
    }
}
