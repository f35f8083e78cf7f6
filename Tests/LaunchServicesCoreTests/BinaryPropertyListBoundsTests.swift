import Foundation
import LaunchServicesCore
import Testing

/// The binary (`bplist00`) side of `PropertyListBounds`: trailer and offset table, references,
/// cycles, object counts and shared references.
@Suite("PropertyListBounds: binary property lists")
struct BinaryPropertyListBoundsTests {
    /// An Info.plist's shape: dict → CFBundleURLTypes array → dict → schemes array.
    static func infoPlist() -> BinaryPlistBuilder {
        var b = BinaryPlistBuilder()
        let top = b.add(.string("placeholder"))
        let idKey = b.add(.string("CFBundleIdentifier")), id = b.add(.string("com.example.app"))
        let typesKey = b.add(.string("CFBundleURLTypes")), schemesKey = b.add(.string("CFBundleURLSchemes"))
        let scheme = b.add(.string("demo"))
        let schemes = b.add(.array([scheme]))
        let type = b.add(.dictionary([(schemesKey, schemes)]))
        let types = b.add(.array([type]))
        b.objects[top] = .dictionary([(idKey, id), (typesKey, types)])
        return b
    }

    @Test("an Info.plist-shaped binary plist passes, with 1- to 8-byte references and offsets", arguments: [1, 2, 4, 8])
    func wellFormed(width: Int) {
        var b = Self.infoPlist()
        b.referenceSize = width
        b.offsetSize = max(width, 2)
        #expect(refusal(b.bytes()) == nil)
    }

    /// Foundation's decoder reads a leaf's bytes as its marker declares them, and traps when
    /// they run past the buffer: the fuzzer found a UTF-16 string declaring 109 characters in
    /// the file's last 20 bytes (now in `Tests/Fuzz/Corpus/plist/`, refused here).
    @Test("a leaf declaring more bytes than lie before the offset table is refused: strings, data, numbers, dates, UIDs", arguments: [
        [0x6F, 0x10, 0x6D, 0x00, 0x41] as [UInt8],   // UTF-16 string of 109 characters, 1 present
        [0x65, 0x61, 0x62],                          // ASCII string of 5, 2 present
        [0x5F, 0x11, 0x01, 0x00, 0x61],              // ASCII string of 256 (2-byte length), 1 present
        [0x44, 0x00],                                // data of 4, 1 present
        [0x13, 0x00, 0x01],                          // 8-byte integer, 2 present
        [0x23, 0x00],                                // 8-byte real, 1 present
        [0x33, 0x00, 0x00],                          // date (8 bytes), 2 present
        [0x83, 0x00],                                // UID of 4 bytes, 1 present
        [0x5F, 0x13, 0x00],                          // a length whose own 8 bytes run past the objects
    ])
    func leafPastTheObjects(_ leaf: [UInt8]) {
        // The leaf is the last object, so what it declares runs into the offset table.
        var b = BinaryPlistBuilder()
        b.add(.dictionary([(1, 2)]))
        b.add(.string("CFBundleName"))
        b.add(.raw(leaf))
        guard case .malformedBinary(let why)? = refusal(b.bytes()) else {
            Issue.record("\(leaf) was not refused as malformed: \(String(describing: refusal(b.bytes())))")
            return
        }
        #expect(why.contains("object 2"), "\(why)")
    }

    @Test("leaves that fit pass: a UTF-16 string, data, numbers, a date, a UID, booleans")
    func leavesThatFit() {
        var b = BinaryPlistBuilder()
        let leaves: [[UInt8]] = [[0x62, 0x00, 0x41, 0x00, 0x42], [0x42, 0x01, 0x02], [0x11, 0x01, 0x00], [0x23] + [UInt8](repeating: 0, count: 8),
                                 [0x33] + [UInt8](repeating: 0, count: 8), [0x80, 0x07], [0x09], [0x08], [0x00]]
        let elements = leaves.map { b.add(.raw($0)) }
        b.top = b.add(.array(elements))
        #expect(refusal(b.bytes()) == nil)
    }

    @Test("the input the fuzzer found Foundation trapping on is refused before it is decoded")
    func fuzzerFound() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/plist/bplist-utf16-string-past-the-end")
        let bytes = [UInt8](try Data(contentsOf: file))
        guard case .malformedBinary(let why)? = refusal(bytes) else {
            Issue.record("not refused: \(String(describing: refusal(bytes)))")
            return
        }
        #expect(why.contains("object 7"), "\(why)")
    }

    @Test("a reference cycle is refused, naming the object")
    func cycle() {
        var b = BinaryPlistBuilder()
        b.add(.array([1]))
        b.add(.dictionary([(2, 0)]))
        b.add(.string("k"))
        #expect(refusal(b.bytes()) == .referenceCycle(object: 0))
        var selfContaining = BinaryPlistBuilder()
        selfContaining.add(.array([0]))
        #expect(refusal(selfContaining.bytes()) == .referenceCycle(object: 0))
    }

    @Test("a reference past the last object is refused")
    func referenceOutOfRange() {
        var b = BinaryPlistBuilder()
        b.add(.array([1, 7]))
        b.add(.integer(1))
        #expect(refusal(b.bytes()) == .referenceOutOfRange(object: 0, reference: 7, objectCount: 2))
    }

    @Test("shared references: a cheap file that stands for too many values is refused")
    func sharedReferences() {
        // 300 references to an array of 400 references to one string: 120,000 strings decoded.
        var b = BinaryPlistBuilder()
        b.add(.array(Array(repeating: 1, count: 300)))
        b.add(.array(Array(repeating: 2, count: 400)))
        b.add(.string("s"))
        #expect(refusal(b.bytes()) == .tooManyValues(limit: PropertyListLimits.infoPlist.maximumObjects))
        // The same sharing within the limit passes: a diamond is not a cycle.
        var small = BinaryPlistBuilder()
        small.add(.array([1, 1, 1]))
        small.add(.array([2, 2]))
        small.add(.string("s"))
        #expect(refusal(small.bytes()) == nil)
    }

    @Test("depth counts the longest path even when a deep object was first reached shallowly")
    func depthThroughSharedObject() {
        var c = BinaryPlistBuilder()
        c.add(.array([1, 2]))                      // 0
        c.add(.array([3]))                         // 1: short way to the chain
        c.add(.array([4]))                         // 2
        c.add(.string("end"))                      // 3: placeholder, replaced below
        for _ in 0 ..< 3 { c.add(.string("pad")) } // 4, 5, 6: replaced below
        c.objects[3] = .array([7])                 // the chain starts at 7
        c.objects[4] = .array([5])
        c.objects[5] = .array([6])
        c.objects[6] = .array([7])
        for level in 7 ..< 7 + 28 { c.add(.array([level + 1])) }
        c.add(.string("leaf"))
        // Via 1 → 3 → chain: 1 + 1 + 1 + 28 = 31 containers; via 2 → 4 → 5 → 6 → chain: 33.
        #expect(refusal(c.bytes()) == .tooDeep(limit: 32))
    }

    @Test("more objects than the limit are refused from the trailer")
    func tooManyObjects() {
        var b = BinaryPlistBuilder()
        b.add(.array(Array(1 ... 20)))
        for _ in 0 ..< 20 { b.add(.integer(0)) }
        let limits = PropertyListLimits(maximumSize: 1 << 20, maximumDepth: 32, maximumObjects: 16)
        #expect(refusal(b.bytes(), limits: limits) == .tooManyObjects(count: 21, limit: 16))
        #expect(refusal(b.bytes()) == nil)
    }

    @Test("a malformed trailer or offset table is refused", arguments: [
        ("offset size 0", 6, [0]),
        ("reference size 9", 7, [9]),
        ("no objects", 8, [0, 0, 0, 0, 0, 0, 0, 0]),
        ("top object out of range", 16, [0, 0, 0, 0, 0, 0, 0, 9]),
        ("table inside the trailer", 24, [0, 0, 0, 0, 0, 0, 0xFF, 0xFF]),
        ("table in the header", 24, [0, 0, 0, 0, 0, 0, 0, 2]),
        ("object count overflows", 8, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
    ] as [(String, Int, [UInt8])])
    func malformedTrailer(label: String, at offset: Int, bytes: [UInt8]) {
        let file = Self.infoPlist().bytes { trailer in trailer.replaceSubrange(offset ..< offset + bytes.count, with: bytes) }
        switch refusal(file) {
        case .malformedBinary?, .tooManyObjects?: break
        case let other: Issue.record("\(label): \(other.map { "\($0)" } ?? "passed")")
        }
    }

    @Test("an offset pointing outside the objects, a count that does not fit, a short file")
    func malformedObjects() {
        var b = Self.infoPlist()
        var file = b.bytes()
        let table = file.count - 32 - b.objects.count * 4
        file[table + 3] = 0xF0 // object 0's offset, now past the objects
        guard case .malformedBinary? = refusal(file) else { Issue.record("offset outside passed"); return }

        b = BinaryPlistBuilder()
        b.add(.array([]))
        file = b.bytes()
        file[8] = 0xAF // "count follows": an integer marker, 8 bytes, all 0xFF
        file.insert(contentsOf: [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], at: 9)
        file[file.count - 1] += 9 // the offset table moved
        guard case .malformedBinary? = refusal(file) else { Issue.record("huge count passed: \(String(describing: refusal(file)))"); return }

        #expect(refusal(Array("bplist00".utf8) + [0x08]) == .malformedBinary("it is shorter than a header, one object and a trailer"))
    }
}
