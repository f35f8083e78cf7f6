import LaunchServicesCore
import Testing

/// The D-Bus `Open`'s options: lsopen's, by the same names; anything else refused by name.
@Suite("D-Bus Open options")
struct BusOpenOptionsTests {
    @Test("every option read: app, background, fallback, a string or JSON annotation")
    func read() throws {
        let parsed = try BusOpenOptions.parse([("app", .string("com.acme.todolist")), ("background", .boolean(true)), ("fallback", .string("https://x"))], total: 3)
        #expect(parsed.options == OpenOptions(app: "com.acme.todolist", background: true))
        #expect(parsed.fallback == "https://x")
        #expect(try BusOpenOptions.parse([("annotation", .string("hi"))], total: 1).annotation == .string("hi"))
        #expect(try BusOpenOptions.parse([("annotationJSON", .string("{\"a\":[1,2.5]}"))], total: 1).annotation
            == .dictionary([("a", .array([.integer(1), .real(2.5)]))]))
        #expect(try BusOpenOptions.parse([], total: 0) == BusOpenOptions())
    }

    @Test("an unknown key, a wrong type, both annotations, bad JSON, a key twice, too many entries: invalidRequest, named")
    func refused() {
        let cases: [([(key: String, value: BusOptionValue)], Int, String)] = [
            ([("backgroud", .boolean(true))], 1, "unknown option 'backgroud'"),
            ([("background", .string("yes"))], 1, "background is a boolean (b), not s"),
            ([("app", .other(signature: "i"))], 1, "app is a string (s), not 'i'"),
            ([("annotation", .string("a")), ("annotationJSON", .string("1"))], 2, "give one of"),
            ([("annotationJSON", .string("{"))], 1, "annotationJSON:"),
            ([("app", .string("a")), ("app", .string("b"))], 2, "given twice"),
            ([], 17, "at most 16"),
        ]
        for (entries, total, text) in cases {
            #expect {
                _ = try BusOpenOptions.parse(entries, total: total)
            } throws: { error in
                guard let error = error as? OpenError else { return false }
                return error.code == .invalidRequest && error.message.contains(text)
            }
        }
    }

    @Test("the daemon's reports: a null inside is left out with its key; an annotation's null is still refused")
    func nulls() throws {
        #expect(try PropertyListJSON.parse("{\"a\":null,\"b\":[null,1]}", maximumBytes: 100, omittingNulls: true) == .dictionary([("b", .array([.integer(1)]))]))
        #expect(throws: PropertyListJSONError.self) { try PropertyListJSON.parse("{\"a\":null}") }
        #expect(throws: PropertyListJSONError.self) { try PropertyListJSON.parse("{\"a\":1}", maximumBytes: 3, omittingNulls: true) }
    }
}
