import LaunchServicesCore
import Testing

/// What a key-file value means, as each GLib getter reads it: strings with escapes, lists
/// separated by `;`, booleans.
@Suite("KeyFile.Value: strings, lists and booleans as GLib reads them")
struct KeyFileValueTests {
    func value(_ text: String) -> KeyFile.Value { KeyFile.Value(text, line: 1) }

    @Test("strings: \\s \\n \\t \\r \\\\ are escapes; others are kept as written; a trailing backslash is dropped", arguments: [
        ("plain", "plain"),
        ("a\\sb", "a b"),
        ("\\s leading", "  leading"),
        ("line\\nbreak", "line\nbreak"),
        ("tab\\there", "tab\there"),
        ("cr\\r", "cr\r"),
        ("back\\\\slash", "back\\slash"),
        ("semi\\;colon", "semi\\;colon"),
        ("unknown\\q", "unknown\\q"),
        ("ends\\", "ends"),
        ("a;b", "a;b"),
    ])
    func strings(text: String, expected: String) {
        #expect(value(text).string == expected)
    }

    @Test("lists: ; separates, \\; is a ; inside an item, a last empty item is none, other empty items are kept", arguments: [
        ("a;b;", ["a", "b"]),
        ("a;b", ["a", "b"]),
        ("", []),
        (";", [""]),
        ("a;;b;", ["a", "", "b"]),
        ("a\\;b;c", ["a;b", "c"]),
        ("a\\sb; c ;", ["a b", " c "]),
        ("x-scheme-handler/mailto;", ["x-scheme-handler/mailto"]),
    ])
    func lists(text: String, expected: [String]) {
        #expect(value(text).stringList == expected)
    }

    @Test("a list with an escape GLib does not know, or ending in a backslash, is no list at all")
    func unreadableLists() {
        #expect(value("a;b\\q;").stringList == nil)
        #expect(value("a;b\\").stringList == nil)
    }

    @Test("a value that is not UTF-8 is no value to any getter")
    func notUTF8() {
        let bytes = KeyFile.Value(bytes: [0x61, 0xFF, 0x62], line: 1)
        #expect(bytes.string == nil)
        #expect(bytes.stringList == nil)
    }

    @Test("booleans: true and 1, false and 0, trailing blanks ignored; anything else is none (GLib: false)", arguments: [
        ("true", true as Bool?), ("1", true), ("true  ", true), ("false", false), ("0", false),
        ("True", nil), ("TRUE", nil), ("yes", nil), ("", nil), ("true\\s", nil),
    ])
    func booleans(text: String, expected: Bool?) {
        #expect(value(text).boolean == expected)
    }
}
