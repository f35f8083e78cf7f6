#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import Testing

/// `PropertyListBounds`: every refusal, the depth boundary, the XML constructs that must not
/// hide or fake nesting, and the repository's own Info.plists passing.
@Suite("PropertyListBounds: XML and binary property lists checked before parsing")
struct PropertyListBoundsTests {
    static let limit = PropertyListLimits.infoPlist.maximumDepth

    static func xml(_ body: String, prologue: String = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") -> [UInt8] {
        Array((prologue + "<plist version=\"1.0\">" + body + "</plist>").utf8)
    }

    /// `levels` containers nested in one another, innermost holding a string.
    static func nested(_ levels: Int, open: String = "<array>", close: String = "</array>") -> [UInt8] {
        xml(String(repeating: open, count: levels) + "<string>x</string>" + String(repeating: close, count: levels))
    }

    /// The repository's demo Info.plists, read with plain POSIX calls.
    static func repositoryInfoPlists() -> [(String, [UInt8])] {
        let root = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/"))
        let names = ["fullapp", "liteapp", "schemedemo", "todolist", "tweeter", "wordrev", "x-sadun-services", "xyz"]
        return names.map { name in
            let path = root + "/config/apps/\(name)/Info.plist"
            var bytes: [UInt8] = []
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = read(fd, &chunk, chunk.count)
                    if n <= 0 { break }
                    bytes += chunk[0 ..< n]
                }
                close(fd)
            }
            return (path, bytes)
        }
    }

    @Test("every Info.plist in config/apps passes")
    func repositoryPlistsPass() throws {
        let plists = Self.repositoryInfoPlists()
        #expect(plists.count == 8)
        for (path, bytes) in plists {
            #expect(!bytes.isEmpty, "\(path) could not be read")
            #expect(refusal(bytes) == nil, "\(path): \(refusal(bytes).map { "\($0)" } ?? "")")
        }
    }

    @Test("10,000 nested arrays or dictionaries are refused, naming depth and limit", arguments: [
        ("<array>", "</array>"), ("<dict><key>k</key>", "</dict>"),
    ])
    func tenThousandDeepXML(open: String, close: String) {
        let error = refusal(Self.nested(10_000, open: open, close: close))
        #expect(error == .tooDeep(limit: Self.limit))
        #expect("\(error.map { "\($0)" } ?? "")".contains("nesting depth > 32"))
        #expect("\(error.map { "\($0)" } ?? "")".contains("limit of 32"))
    }

    @Test("a 10,000-deep binary plist is refused, naming depth and limit")
    func tenThousandDeepBinary() {
        #expect(refusal(BinaryPlistBuilder.nested(10_000)) == .tooDeep(limit: Self.limit))
    }

    @Test("depth: the limit passes, one more is refused (the outermost container counts as one)")
    func depthBoundary() {
        #expect(refusal(Self.nested(Self.limit)) == nil)
        #expect(refusal(Self.nested(Self.limit + 1)) == .tooDeep(limit: Self.limit))
        #expect(refusal(BinaryPlistBuilder.nested(Self.limit)) == nil)
        #expect(refusal(BinaryPlistBuilder.nested(Self.limit + 1)) == .tooDeep(limit: Self.limit))
        let small = PropertyListLimits(maximumSize: 1 << 20, maximumDepth: 2, maximumObjects: 100)
        #expect(refusal(Self.xml("<dict><key>a</key><array/></dict>"), limits: small) == nil)
        #expect(refusal(Self.xml("<dict><key>a</key><array><dict/></array></dict>"), limits: small) == nil)
        #expect(refusal(Self.xml("<dict><key>a</key><array><array><true/></array></array></dict>"), limits: small) == .tooDeep(limit: 2))
    }

    @Test("self-closing containers, siblings, comments, CDATA, DOCTYPE and the declaration do not add depth")
    func constructsThatDoNotNest() {
        let siblings = String(repeating: "<array/><dict/><array></array>", count: 1_000)
        #expect(refusal(Self.xml("<array>\(siblings)</array>")) == nil)
        let commented = "<array><!-- <array><array><array> --><string><![CDATA[<array><dict>]]></string></array>"
        let tight = PropertyListLimits(maximumSize: 1 << 20, maximumDepth: 1, maximumObjects: 100)
        #expect(refusal(Self.xml(commented), limits: tight) == nil)
        let prologue = "\u{FEFF}<?xml version=\"1.0\"?>\n<!-- a comment -->\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"x.dtd\">\n"
        #expect(refusal(Self.xml("<dict><key>k</key><?pi?><true/></dict>", prologue: prologue), limits: tight) == nil)
        #expect(refusal(Self.xml("<string/>")) == nil)
    }

    @Test("a closing tag hidden where Foundation reads a comment cannot cancel a real <array>")
    func hiddenCloseTags() {
        // Foundation ends a comment at the first "-->" after "<!--", so "<!-->" does not end
        // it and the </array> is comment text: each repetition nests one level deeper.
        let trick = String(repeating: "<array><!--></array>-->", count: 10_000)
        #expect(refusal(Self.xml(trick)) == .tooDeep(limit: Self.limit))
        // Inside <plist>, "<?>" is a whole processing instruction for Foundation.
        let pi = String(repeating: "<array><?>", count: 100) + "<true/>" + String(repeating: "</array>", count: 100)
        #expect(refusal(Self.xml(pi)) == .tooDeep(limit: Self.limit))
    }

    @Test("what the checker cannot read unambiguously is refused", arguments: [
        ("prefix-named tag", "<plist><arrays></arrays></plist>"),
        ("text between values", "<plist><array>text<true/></array></plist>"),
        ("'<' in a string", "<plist><string>a<b</string></plist>"),
        ("comment in a string", "<plist><string>a<!-- x --></string></plist>"),
        ("unclosed comment", "<plist><array><!-- <array></array></plist>"),
        ("unclosed tag", "<plist><array"),
        ("close without open", "<plist></array></plist>"),
        ("mismatched close", "<plist><array></dict></plist>"),
        ("key outside a dict", "<plist><array><key>k</key></array></plist>"),
        ("value where a key is due", "<plist><dict><string>v</string></dict></plist>"),
        ("key without value", "<plist><dict><key>k</key></dict></plist>"),
        ("two values in plist", "<plist><true/><false/></plist>"),
        ("DOCTYPE with internal subset", "<!DOCTYPE plist [ <!ENTITY x \"y\"> ]><plist><true/></plist>"),
        ("empty integer", "<plist><integer/></plist>"),
        ("ends inside", "<plist><array>"),
    ])
    func malformedXML(label: String, text: String) {
        guard case .malformedXML = refusal(Array(text.utf8)) else {
            Issue.record("\(label): \(refusal(Array(text.utf8)).map { "\($0)" } ?? "passed")")
            return
        }
    }

    @Test("larger than the limit is refused, naming the size and the limit")
    func tooLarge() {
        let limit = PropertyListLimits.infoPlist.maximumSize
        let padding = String(repeating: " ", count: limit)
        let bytes = Self.xml("<true/>") + Array(padding.utf8)
        #expect(refusal(bytes) == .tooLarge(size: bytes.count, limit: limit))
        #expect("\(PropertyListBoundsError.tooLarge(size: bytes.count, limit: limit))".contains("\(bytes.count) bytes, more than the limit of \(limit) bytes"))
        #expect(refusal(Array(Self.xml("<true/>") + Array(String(repeating: " ", count: limit - 200).utf8))) == nil)
    }

    @Test("encodings other than UTF-8 and other formats are refused")
    func encodingsAndFormats() {
        #expect(refusal([0xFF, 0xFE] + Array("<\0p\0".utf8)) == .unsupportedEncoding("UTF-16 or UTF-32 (it starts with a byte-order mark)"))
        #expect(refusal([0xFE, 0xFF, 0, 0x3C]) == .unsupportedEncoding("UTF-16 or UTF-32 (it starts with a byte-order mark)"))
        #expect(refusal(Self.xml("<true/>", prologue: "<?xml version=\"1.0\" encoding=\"UTF-16\"?>")) == .unsupportedEncoding("'UTF-16'"))
        #expect(refusal(Self.xml("<true/>", prologue: "<?xml version='1.0' encoding = 'latin1' ?>")) == .unsupportedEncoding("'latin1'"))
        #expect(refusal(Self.xml("<true/>", prologue: "<?xml version=\"1.0\" encoding=\"utf-8\"?>")) == nil)
        #expect(refusal(Array("{ CFBundleIdentifier = x; }".utf8)) == .unrecognizedFormat)
        #expect(refusal([]) == .unrecognizedFormat)
        #expect(refusal(Array("bplist01".utf8) + [UInt8](repeating: 0, count: 40)) == .malformedBinary("only version 00 (bplist00) is read"))
    }

    @Test("more XML elements than the object limit are refused")
    func tooManyXMLValues() {
        let limits = PropertyListLimits(maximumSize: 1 << 20, maximumDepth: 32, maximumObjects: 10)
        #expect(refusal(Self.xml("<array>" + String(repeating: "<true/>", count: 8) + "</array>"), limits: limits) == nil)
        #expect(refusal(Self.xml("<array>" + String(repeating: "<true/>", count: 9) + "</array>"), limits: limits) == .tooManyValues(limit: 10))
    }
}
