import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Every way a frame body can be wrong is an error naming what was wrong; never a trap.
@Suite("Malformed input")
struct MalformedInputTests {
    typealias B = ProtocolBytes

    @Test("unknown message kinds", arguments: [UInt8(0x00), 0x04, 0x17, 0x23, 0x34, 0x42, 0x7E, 0xFF])
    func unknownKind(kind: UInt8) throws {
        let error = try #require(B.decodeError([kind, 0, 0, 0, 1]))
        #expect(error == .unknownKind(kind))
        #expect(error.description == "unknown message kind 0x\(String(kind, radix: 16))")
    }

    @Test("an unknown kind is refused even when its fields are well formed")
    func unknownKindWithFields() {
        #expect(B.decodeError(B.body(0x7E) { $0.field(1, string: "x") }) == .unknownKind(0x7E))
    }

    @Test("truncated bodies and fields", arguments: [
        ("empty body", [UInt8](), "byte at offset 0"),
        ("kind only", [0x12], "32-bit integer at offset 1"),
        ("partial id", [0x12, 0, 0, 0], "32-bit integer at offset 1"),
        ("field tag only", [0x12, 0, 0, 0, 1, 1], "32-bit integer at offset 6"),
        ("partial field length", [0x12, 0, 0, 0, 1, 1, 0, 0], "32-bit integer at offset 6"),
        ("field longer than the body", [0x12, 0, 0, 0, 1, 1, 0, 0, 0, 50, 0x41], "field 1 declares 50 bytes, 1 remain"),
        ("second field cut", [0x12, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0x41, 2, 0, 0, 0, 9], "field 2 declares 9 bytes, 0 remain"),
    ] as [(String, [UInt8], String)])
    func truncated(label: String, body: [UInt8], what: String) throws {
        let error = try #require(B.decodeError(body), "\(label)")
        #expect(error == .truncated(what), "\(label)")
        #expect(error.description == "message truncated: \(what)")
    }

    @Test("a truncated timing inside an openResult")
    func truncatedTiming() {
        let body = B.body(0x11) { w in
            w.field(1, bool: true)
            w.field(8, [1, 0, 0, 0, 9, 0x61])
        }
        #expect(B.decodeError(body) == .truncated("field 1 declares 9 bytes, 1 remain"))
    }

    @Test("truncated annotations: cut inside, empty, a key without its value")
    func truncatedAnnotation() {
        let cut = B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, [1, 0, 0, 0, 5, 0x61]) }
        #expect(B.decodeError(cut) == .truncated("field 1 declares 5 bytes, 1 remain"))
        let empty = B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, []) }
        #expect(B.decodeError(empty) == .truncated("byte at offset 0"))
        let keyOnly = B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, B.field(7, B.field(0x10, [0x6B]))) }
        guard case .truncated? = B.decodeError(keyOnly) else {
            Issue.record("a dictionary key without a value should be truncated, got \(String(describing: B.decodeError(keyOnly)))")
            return
        }
    }

    /// Every required field of every message, missing.
    static let missing: [(String, [UInt8], String, String)] = [
        ("hello, nothing", B.body(0x01), "hello", "role"),
        ("hello, role only", B.body(0x01) { $0.field(2, string: "client") }, "hello", "version"),
        ("welcome, nothing", B.body(0x02), "welcome", "version"),
        ("welcome, version only", B.body(0x02) { $0.field(1, u64: 1) }, "welcome", "identity"),
        ("failure, nothing", B.body(0x03), "failure", "code"),
        ("failure, code only", B.body(0x03) { $0.field(1, string: "timeout") }, "failure", "message"),
        ("open", B.body(0x10), "open", "url"),
        ("openResult, nothing", B.body(0x11), "openResult", "opened"),
        ("openResult, failed without code", B.body(0x11) { $0.field(1, bool: false); $0.field(4, string: "m") }, "openResult", "code"),
        ("openResult, failed without message", B.body(0x11) { $0.field(1, bool: false); $0.field(3, string: "crashed") }, "openResult", "message"),
        ("timing without phase", B.body(0x11) { $0.field(1, bool: true); $0.nested(8) { $0.field(2, u64: 1) } }, "timing", "phase"),
        ("timing without nanoseconds", B.body(0x11) { $0.field(1, bool: true); $0.nested(8) { $0.field(1, string: "launch") } }, "timing", "nanoseconds"),
        ("canOpen", B.body(0x12), "canOpen", "url"),
        ("canOpenResult", B.body(0x13) { $0.field(2, string: "a") }, "canOpenResult", "canOpen"),
        ("query", B.body(0x20), "query", "topic"),
        ("queryResult", B.body(0x21), "queryResult", "json"),
        ("command", B.body(0x22) { $0.field(2, string: "argument") }, "command", "verb"),
        ("launchMethod, nothing", B.body(0x30), "launchMethod", "phase"),
        ("launchMethod, phase only", B.body(0x30) { $0.field(1, string: "launch") }, "launchMethod", "url"),
        ("launchMethod, no source", B.body(0x30) { $0.field(1, string: "launch"); $0.field(2, string: "x:1") }, "launchMethod", "sourceApplication"),
        ("deliver, nothing", B.body(0x31), "deliver", "url"),
        ("deliver, no source", B.body(0x31) { $0.field(2, string: "x:1") }, "deliver", "sourceApplication"),
        ("notify", B.body(0x32), "notify", "notification"),
        ("phaseResult", B.body(0x33) { $0.field(2, string: "open") }, "phaseResult", "accepted"),
    ]

    @Test("a missing required field is named, with its message kind", arguments: missing)
    func missingField(label: String, body: [UInt8], kind: String, field: String) throws {
        let error = try #require(B.decodeError(body), "\(label)")
        #expect(error == .missingField(kind: kind, field: field), "\(label)")
        #expect(error.description == "\(kind) message lacks its required field '\(field)'")
    }

    @Test("booleans must be exactly one byte, 0 or 1", arguments: [[UInt8](), [1, 1], [0, 0], [2], [0xFF]])
    func wrongBoolean(payload: [UInt8]) {
        let reason = "a boolean is one byte, 0 or 1"
        #expect(B.decodeError(B.body(0x33) { $0.field(1, payload) }) == .invalid("accepted", reason))
        #expect(B.decodeError(B.body(0x13) { $0.field(1, payload) }) == .invalid("canOpen", reason))
        #expect(B.decodeError(B.body(0x11) { $0.field(1, payload) }) == .invalid("opened", reason))
        #expect(B.decodeError(B.body(0x11) { $0.field(1, bool: true); $0.field(7, payload) }) == .invalid("launched", reason))
        #expect(B.decodeError(B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, B.field(4, payload)) }) == .invalid("annotation boolean", reason))
    }

    @Test("64-bit integers must be exactly eight bytes", arguments: [0, 1, 3, 7, 9, 16])
    func wrongU64(size: Int) {
        let payload = [UInt8](repeating: 0, count: size)
        let reason = "a 64-bit integer is 8 bytes, not \(size)"
        #expect(B.decodeError(B.body(0x01) { $0.field(1, payload); $0.field(2, string: "client") }) == .invalid("version", reason))
        #expect(B.decodeError(B.body(0x02) { $0.field(1, payload); $0.field(2, string: "id") }) == .invalid("version", reason))
        #expect(B.decodeError(B.body(0x11) { w in
            w.field(1, bool: true)
            w.nested(8) { $0.field(1, string: "launch"); $0.field(2, payload) }
        }) == .invalid("nanoseconds", reason))
        #expect(B.decodeError(B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, B.field(2, payload)) }) == .invalid("annotation integer", reason))
        #expect(B.decodeError(B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, B.field(3, payload)) }) == .invalid("annotation real", reason))
    }

    @Test("a desktop app's pid, status and signal (added in 0.3) must fit 31 bits")
    func desktopNumbersInRange() {
        for (tag, name) in [(UInt8(13), "pid"), (14, "exitStatus"), (15, "signal")] {
            let body = B.body(0x11) { $0.field(1, bool: true); $0.field(12, string: "running"); $0.field(tag, u64: UInt64(Int32.max) + 1) }
            #expect(B.decodeError(body) == .invalid(name, "2147483648 is larger than 2147483647"), "\(name)")
        }
    }

    @Test("unknown enum values are refused, naming the field and quoting the value")
    func unknownEnumValues() {
        let cases: [(String, [UInt8], WireError)] = [
            ("role", B.body(0x01) { $0.field(1, u64: 1); $0.field(2, string: "root") },
             .invalid("role", "'root' is neither 'client' nor 'app'")),
            ("role is case-sensitive", B.body(0x01) { $0.field(1, u64: 1); $0.field(2, string: "Client") },
             .invalid("role", "'Client' is neither 'client' nor 'app'")),
            ("failure code", B.body(0x03) { $0.field(1, string: "bogus"); $0.field(2, string: "m") },
             .invalid("code", "unknown value 'bogus'")),
            ("failure phase", B.body(0x03) { $0.field(1, string: "timeout"); $0.field(2, string: "m"); $0.field(3, string: "lunch") },
             .invalid("phase", "unknown value 'lunch'")),
            ("openResult code", B.body(0x11) { $0.field(1, bool: false); $0.field(3, string: "oops"); $0.field(4, string: "m") },
             .invalid("code", "unknown value 'oops'")),
            ("openResult phase", B.body(0x11) { $0.field(1, bool: false); $0.field(3, string: "crashed"); $0.field(4, string: "m"); $0.field(5, string: "") },
             .invalid("phase", "unknown value ''")),
            ("openResult method", B.body(0x11) { $0.field(1, bool: true); $0.field(6, string: "openURL") },
             .invalid("method", "unknown value 'openURL'")),
            ("timing phase", B.body(0x11) { w in w.field(1, bool: true); w.nested(8) { $0.field(1, string: "warmup"); $0.field(2, u64: 1) } },
             .invalid("phase", "unknown value 'warmup'")),
            ("openResult handlerKind", B.body(0x11) { $0.field(1, bool: true); $0.field(11, string: "Desktop") },
             .invalid("handlerKind", "unknown value 'Desktop'")),
            ("openResult desktopOutcome", B.body(0x11) { $0.field(1, bool: true); $0.field(12, string: "opened") },
             .invalid("desktopOutcome", "unknown value 'opened'")),
            ("launchMethod phase", B.body(0x30) { $0.field(1, string: "didFinish"); $0.field(2, string: "x:1"); $0.field(3, string: "s") },
             .invalid("phase", "unknown value 'didFinish'")),
            ("notification", B.body(0x32) { $0.field(1, string: "didExplode") },
             .invalid("notification", "unknown value 'didExplode'")),
            ("phaseResult method", B.body(0x33) { $0.field(1, bool: true); $0.field(2, string: "Open") },
             .invalid("method", "unknown value 'Open'")),
        ]
        for (label, body, expected) in cases {
            #expect(B.decodeError(body) == expected, "\(label)")
        }
        #expect(WireError.invalid("role", "why").description == "field 'role' is invalid: why")
    }

    @Test("malformed annotations: unknown type tag, a dictionary entry without a key, trailing bytes")
    func malformedAnnotation() {
        func open(_ annotation: [UInt8]) -> [UInt8] {
            B.body(0x10) { $0.field(1, string: "x:1"); $0.field(2, annotation) }
        }
        #expect(B.decodeError(open(B.field(9, []))) == .invalid("annotation", "unknown property-list type tag 9"))
        #expect(B.decodeError(open(B.field(0x10, Array("k".utf8)))) == .invalid("annotation", "unknown property-list type tag 16"))
        #expect(B.decodeError(open(B.field(7, B.field(1, [0x61]) + B.field(1, [0x62])))) ==
                .invalid("annotation", "dictionary entry starts with tag 1, not a key (0x10)"))
        #expect(B.decodeError(open(B.field(4, [1]) + B.field(4, [0]))) == .invalid("annotation", "trailing bytes after the value"))
        // The same checks apply to a delivery's annotation (field 4).
        let deliver = B.body(0x31) { $0.field(2, string: "x:1"); $0.field(3, string: "s"); $0.field(4, B.field(4, [1]) + [0]) }
        #expect(B.decodeError(deliver) == .invalid("annotation", "trailing bytes after the value"))
        let badTag = B.body(0x31) { $0.field(2, string: "x:1"); $0.field(3, string: "s"); $0.field(4, B.field(0xEE, [])) }
        #expect(B.decodeError(badTag) == .invalid("annotation", "unknown property-list type tag 238"))
    }

    @Test("an array inside an annotation with a malformed element fails as a whole")
    func malformedElement() {
        let body = B.body(0x10) { w in
            w.field(1, string: "x:1")
            w.field(2, B.field(6, B.field(1, [0x61]) + B.field(2, [1, 2])))
        }
        #expect(B.decodeError(body) == .invalid("annotation integer", "a 64-bit integer is 8 bytes, not 2"))
    }
}
