import LaunchServicesCore
import Testing

/// `lsopen --annotation-json`: JSON read as a property-list value, exactly, bounded, and
/// refused by name where it has no property-list form.
@Suite struct PropertyListJSONTests {
    @Test("each JSON value has its property-list form; dictionaries keep their key order")
    func values() throws {
        #expect(try PropertyListJSON.parse(#"{"k":[1,2],"b":true,"f":false,"r":0.5,"e":1e3,"s":"x","n":-7,"o":{}}"#) == .dictionary([
            ("k", .array([.integer(1), .integer(2)])), ("b", .boolean(true)), ("f", .boolean(false)), ("r", .real(0.5)), ("e", .real(1000)),
            ("s", .string("x")), ("n", .integer(-7)), ("o", .dictionary([])),
        ]))
        #expect(try PropertyListJSON.parse(" 42 ") == .integer(42))
        #expect(try PropertyListJSON.parse("2.0") == .real(2), "a fraction makes a real, even a whole one")
        #expect(try PropertyListJSON.parse("[]") == .array([]))
        #expect(try PropertyListJSON.parse("-9223372036854775808") == .integer(.min))
    }

    @Test("strings: every escape, surrogate pairs, and UTF-8 as it is")
    func strings() throws {
        #expect(try PropertyListJSON.parse(#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00é""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\té😀é"))
        #expect(try PropertyListJSON.parse(#""""#) == .string(""))
    }

    @Test("refused by name", arguments: [
        ("null", "null at byte 0 has no property-list form"), (#"{"a":null}"#, "null at byte 5"),
        (#"{"a":1,"a":2}"#, "the key 'a' at byte 7 appears twice"), ("9223372036854775808", "does not fit"), ("1e999", "does not fit"),
        ("", "not JSON at byte 0"), ("[1,]", "not JSON at byte 3"), ("[1 2]", "expected ',' or ']'"), (#"{"a" 1}"#, "expected ':'"),
        ("01", "may not start with 0"), ("1.", "a fraction needs digits"), (#""a"#, "never closed"), ("\"a\nb\"", "must be escaped"),
        (#""\ud800""#, "low surrogate"), (#""\udc00""#, "lone surrogate"), (#""\x""#, "unknown escape"), ("tru", "expected a JSON value"),
        ("1 2", "unexpected text after the value"), ("{1:2}", "expected a key"), ("NaN", "expected a JSON value"),
    ])
    func refused(_ json: String, _ fragment: String) {
        #expect {
            try PropertyListJSON.parse(json)
        } throws: { error in
            "\(error)".contains(fragment)
        }
    }

    @Test("nesting: 32 levels are read, 33 refused; the size is bounded before reading")
    func bounds() throws {
        let deepest = String(repeating: "[", count: 31) + "1" + String(repeating: "]", count: 31)
        #expect(throws: Never.self) { try PropertyListJSON.parse(deepest) }
        let tooDeep = String(repeating: "[", count: 32) + "1" + String(repeating: "]", count: 32)
        #expect(throws: PropertyListJSONError.tooDeep(limit: 32)) { try PropertyListJSON.parse(tooDeep) }
        let huge = String(repeating: "[", count: 300_000)
        #expect(throws: PropertyListJSONError.tooLarge(size: 300_000, limit: PropertyListJSON.maximumBytes)) { try PropertyListJSON.parse(huge) }
    }
}
