import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// A newer peer may add optional fields: unknown tags are read past and ignored.
@Suite("Forward compatibility: unknown tags")
struct ForwardCompatibilityTests {
    /// Tags no message of version 1 uses.
    static let unknownTags: [UInt8] = [0x00, 0x40, 0x99, 0xEE, 0xFF]

    @Test("unknown fields before, between and after the known ones are ignored, in every message", arguments: EnvelopeRoundTripTests.messages)
    func everyMessage(message: Message) throws {
        let envelope = Envelope(id: 42, message)
        let body = Array(Frame.encode(envelope).dropFirst(Frame.headerLength))
        let header = Array(body.prefix(5))
        let fields = Array(body.dropFirst(5))
        for tag in Self.unknownTags {
            let extra = ProtocolBytes.field(tag, Array("from the future".utf8))
            let empty = ProtocolBytes.field(tag, [])
            #expect(try Envelope.decode(header + extra + fields) == envelope, "tag \(tag) first")
            #expect(try Envelope.decode(header + fields + extra) == envelope, "tag \(tag) last")
            #expect(try Envelope.decode(header + empty + fields + extra + empty) == envelope, "tag \(tag) around")
        }
    }

    @Test("an unknown field between two known fields is ignored")
    func between() throws {
        let body = ProtocolBytes.body(0x30) { w in
            w.field(1, string: "didFinishLaunching")
            w.field(0x77, [1, 2, 3])
            w.field(2, string: "x:1")
            w.field(0x78, u64: 9)
            w.field(3, string: "src")
        }
        #expect(try Envelope.decode(body) == Envelope(id: 7, .launchMethod(.didFinishLaunching, Delivery(url: "x:1", sourceApplication: "src"))))
    }

    @Test("unknown fields inside a timing are ignored too")
    func insideTiming() throws {
        let body = ProtocolBytes.body(0x11) { w in
            w.field(1, bool: true)
            w.nested(8) { t in
                t.field(9, string: "future")
                t.field(1, string: "openURL")
                t.field(3, [0xAB])
                t.field(2, u64: 77)
            }
        }
        #expect(try Envelope.decode(body) == Envelope(id: 7, .openResult(OpenOutcome(app: nil, timings: [PhaseTiming(phase: .openURL, nanoseconds: 77)]))))
    }

    @Test("an unknown field may be large and hold anything, even bytes that look like fields")
    func largeUnknown() throws {
        let noise = ProtocolBytes.field(1, Array("not the url".utf8)) + [UInt8](repeating: 0xFF, count: 10_000)
        let body = ProtocolBytes.body(0x12) { w in
            w.field(0xEE, noise)
            w.field(1, string: "x:y")
        }
        #expect(try Envelope.decode(body) == Envelope(id: 7, .canOpen(url: "x:y")))
    }

    @Test("a repeated known field: the first one counts (command arguments, timings are the repeated ones)")
    func repeatedField() throws {
        let body = ProtocolBytes.body(0x12) { w in
            w.field(1, string: "first:1")
            w.field(1, string: "second:2")
        }
        #expect(try Envelope.decode(body) == Envelope(id: 7, .canOpen(url: "first:1")))
        let command = ProtocolBytes.body(0x22) { w in
            w.field(2, string: "a")
            w.field(1, string: "verb")
            w.field(2, string: "b")
        }
        #expect(try Envelope.decode(command) == Envelope(id: 7, .command(verb: "verb", arguments: ["a", "b"])))
    }
}

@Suite("Message kinds: one table")
struct MessageKindTableTests {
    @Test("every kind has a distinct byte and name, and decoding an unknown byte names it")
    func table() {
        #expect(Set(MessageKind.allCases.map(\.rawValue)).count == MessageKind.allCases.count)
        #expect(Set(MessageKind.allCases.map(\.name)).count == MessageKind.allCases.count)
        #expect(MessageKind.pasteboardResult.name == "pasteboardResult")
        #expect(Message.awaitCallback.kind == 0x14 && Message.awaitCallback.kindName == "awaitCallback")
        #expect(MessageKind(rawValue: 0x7E) == nil)
    }
}
