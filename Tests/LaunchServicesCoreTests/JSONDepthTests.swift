import LaunchServicesCore
import Testing

/// `JSONDepth`: the nesting pre-check run before `JSONSerialization` on pasteboard JSON.
@Suite("JSONDepth: nesting checked before parsing")
struct JSONDepthTests {
    func refusal(_ text: String, limit: Int = JSONDepth.defaultLimit) -> JSONDepthError? {
        refusal(Array(text.utf8), limit: limit)
    }

    func refusal(_ bytes: [UInt8], limit: Int = JSONDepth.defaultLimit) -> JSONDepthError? {
        do {
            try JSONDepth.check(bytes, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test("100,000 nested arrays are refused, naming depth and limit")
    func hundredThousandDeep() {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(refusal(text) == .tooDeep(limit: JSONDepth.defaultLimit))
        #expect("\(JSONDepthError.tooDeep(limit: 512))".contains("nesting depth > 512"))
    }

    @Test("the limit passes, one more is refused; objects and arrays both count")
    func boundary() {
        #expect(refusal(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)) == nil)
        #expect(refusal(String(repeating: "[", count: 513)) == .tooDeep(limit: 512))
        #expect(refusal(#"{"a":[{"b":[]}]}"#, limit: 4) == nil)
        #expect(refusal(#"{"a":[{"b":[[]]}]}"#, limit: 4) == .tooDeep(limit: 4))
    }

    @Test("brackets in strings, escaped quotes and siblings do not add depth")
    func strings() {
        #expect(refusal(#"["[[[[", "\"[[[[", "\\", {"k}": "{{{{"}]"#, limit: 2) == nil)
        #expect(refusal(#"["\\"[[[]]]]"#, limit: 2) == .tooDeep(limit: 2))
        #expect(refusal(String(repeating: "[],{},", count: 10_000), limit: 1) == nil)
        #expect(refusal("\"unterminated [[[[", limit: 1) == nil)
    }

    @Test("a NUL byte (UTF-16 or UTF-32 JSON) is refused")
    func notUTF8() {
        #expect(refusal([0x5B, 0x00, 0x5D, 0x00]) == .notUTF8)
        #expect(refusal([0xFF, 0xFE, 0x5B, 0x00]) == .notUTF8)
        #expect(refusal("[\"é\"]") == nil)
    }
}
