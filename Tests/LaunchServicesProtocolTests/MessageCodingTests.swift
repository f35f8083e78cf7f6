import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Encode → frame → decode, for every message, and every way bytes can be wrong.
@Suite("Wire protocol")
struct MessageCodingTests {
    /// Encodes as a frame, checks the length prefix, decodes the body.
    func roundTrip(_ envelope: Envelope) throws -> Envelope {
        let frame = Frame.encode(envelope)
        let declared = try frame.withUnsafeBytes { try Frame.declaredLength($0, limit: Frame.defaultMaximumLength) }
        #expect(declared == frame.count - 4)
        return try Envelope.decode(Array(frame.dropFirst(4)))
    }

    static let annotation: PropertyListValue = .dictionary([
        ("s", .string("héllo")), ("i", .integer(-42)), ("r", .real(2.5)), ("b", .boolean(true)),
        ("d", .data([0, 1, 255])), ("a", .array([.string("x"), .array([]), .dictionary([])])),
    ])

    static let messages: [Message] = [
        .hello(version: 1, role: .client, program: "lsopen"),
        .hello(version: 1, role: .app, program: nil),
        .welcome(version: 1, identity: "org.swift-launch-services.lsopen"),
        .failure(OpenError(.protocolError, "bad")),
        .failure(OpenError(.timeout, phase: .didFinishLaunching, "late")),
        .open(url: "todolist://www.acme.com?Quarterly%20Report#200806231300", annotation: nil),
        .open(url: "xyz:1", annotation: annotation),
        .openResult(OpenOutcome(app: "a", launched: true, method: .open, timings: [PhaseTiming(phase: .launch, nanoseconds: 5), PhaseTiming(phase: .openURL, nanoseconds: UInt64.max)])),
        .openResult(.failure(OpenError(.vetoed, phase: .willFinishLaunching, "no"), app: "a", launched: true)),
        .openResult(.failure(OpenError(.noHandler, "none"))),
        .canOpen(url: "x:y"),
        .canOpenResult(canOpen: true, app: "a"),
        .canOpenResult(canOpen: false, app: nil),
        .query(topic: "status"),
        .queryResult(json: "{\"a\": 1}"),
        .launchMethod(.willFinishLaunching, Delivery(url: "a:b", sourceApplication: "src", annotation: .string("n"))),
        .launchMethod(.didFinishLaunching, Delivery(url: "a:b", sourceApplication: "src")),
        .deliver(Delivery(url: "a:b", sourceApplication: "src", annotation: annotation)),
        .notify(.willEnterForeground),
        .phaseResult(accepted: false, method: DeliveryMethod.none),
        .phaseResult(accepted: true, method: nil),
    ]

    @Test("every message survives a round trip", arguments: messages)
    func everyMessage(message: Message) throws {
        let envelope = Envelope(id: 0xDEAD_BEEF, message)
        #expect(try roundTrip(envelope) == envelope)
    }

    @Test("known bytes: the hello lsopen sends")
    func helloBytes() {
        let frame = Frame.encode(Envelope(id: 0, .hello(version: 1, role: .client, program: "ls")))
        #expect(frame == [0, 0, 0, 36, 0x01, 0, 0, 0, 0,
                          1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1,
                          2, 0, 0, 0, 6] + Array("client".utf8) + [3, 0, 0, 0, 2] + Array("ls".utf8))
    }

    @Test("unknown tags are ignored (forward compatibility)")
    func unknownTags() throws {
        var w = WireWriter()
        w.u8(0x12)
        w.u32(9)
        w.field(0xEE, string: "from the future")
        w.field(1, string: "x:y")
        #expect(try Envelope.decode(w.bytes) == Envelope(id: 9, .canOpen(url: "x:y")))
    }

    @Test("malformed bodies are errors that name what was wrong")
    func malformed() {
        #expect(throws: WireError.unknownKind(0x7E)) { try Envelope.decode([0x7E, 0, 0, 0, 1]) }
        #expect(throws: WireError.self) { try Envelope.decode([0x12, 0, 0]) }
        #expect(throws: WireError.self) { try Envelope.decode([0x12, 0, 0, 0, 1, 1, 0, 0, 0, 50, 0x41]) }
        #expect(throws: WireError.missingField(kind: "canOpen", field: "url")) { try Envelope.decode([0x12, 0, 0, 0, 1]) }
        // A boolean of two bytes, a version of three.
        #expect(throws: WireError.invalid("accepted", "a boolean is one byte, 0 or 1")) { try Envelope.decode([0x33, 0, 0, 0, 1, 1, 0, 0, 0, 2, 1, 1]) }
        #expect(throws: WireError.self) { try Envelope.decode([0x01, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 1, 2, 0, 0, 0, 6] + Array("client".utf8)) }
        var w = WireWriter()
        w.u8(0x32); w.u32(0); w.field(1, string: "didExplode")
        #expect(throws: WireError.invalid("notification", "unknown value 'didExplode'")) { try Envelope.decode(w.bytes) }
        var h = WireWriter()
        h.u8(0x01); h.u32(0); h.field(1, u64: 1); h.field(2, string: "root")
        #expect(throws: WireError.self) { try Envelope.decode(h.bytes) }
    }

    @Test("annotations nested too deep are refused, not recursed into")
    func tooDeep() {
        var value = PropertyListValue.string("x")
        for _ in 0..<(PropertyListCoding.maximumDepth + 1) { value = .array([value]) }
        let bytes = Array(Frame.encode(Envelope(id: 1, .open(url: "a:b", annotation: value))).dropFirst(4))
        #expect(throws: WireError.self) { try Envelope.decode(bytes) }
        var ok = PropertyListValue.string("x")
        for _ in 0..<(PropertyListCoding.maximumDepth - 2) { ok = .array([ok]) }
        #expect(throws: Never.self) { try Envelope.decode(Array(Frame.encode(Envelope(id: 1, .open(url: "a:b", annotation: ok))).dropFirst(4))) }
    }

    @Test("frame lengths: incomplete, empty, too short, over the limit")
    func frameLengths() throws {
        func declared(_ bytes: [UInt8], limit: Int = 100) throws -> Int? {
            try bytes.withUnsafeBytes { try Frame.declaredLength($0, limit: limit) }
        }
        #expect(try declared([0, 0, 0]) == nil)
        #expect(try declared([0, 0, 0, 5]) == 5)
        #expect(throws: WireError.emptyFrame) { try declared([0, 0, 0, 0]) }
        #expect(throws: WireError.self) { try declared([0, 0, 0, 4]) }
        #expect(throws: WireError.frameTooLarge(length: 101, limit: 100)) { try declared([0, 0, 0, 101]) }
        #expect(WireError.frameTooLarge(length: 101, limit: 100).description.contains("101"))
    }
}

extension Message: CustomTestStringConvertible {
    public var testDescription: String { kindName }
}
