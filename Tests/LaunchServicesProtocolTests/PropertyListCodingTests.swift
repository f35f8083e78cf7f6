import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Annotations (`PropertyListValue`) on the wire: every case, nesting, and the depth limit.
@Suite("Property-list annotations on the wire")
struct PropertyListWireTests {
    static let everyCase: PropertyListValue = .dictionary([
        ("string", .string("héllo 😀")),
        ("emptyString", .string("")),
        ("int", .integer(42)),
        ("negative", .integer(-1)),
        ("min", .integer(.min)),
        ("max", .integer(.max)),
        ("real", .real(3.25)),
        ("negativeReal", .real(-1e300)),
        ("infinity", .real(.infinity)),
        ("negativeInfinity", .real(-.infinity)),
        ("tiny", .real(.leastNonzeroMagnitude)),
        ("true", .boolean(true)),
        ("false", .boolean(false)),
        ("data", .data(Array(0...255))),
        ("emptyData", .data([])),
        ("array", .array([.string("a"), .integer(1), .real(0.5), .boolean(false), .data([9]), .array([.array([])]), .dictionary([("k", .boolean(false))])])),
        ("emptyArray", .array([])),
        ("emptyDictionary", .dictionary([])),
        ("nested", .dictionary([("deeper", .dictionary([("list", .array([.data([1]), .real(-0.5), .dictionary([("x", .array([.string("y")]))])]))]))])),
        ("duplicate", .string("first")),
        ("duplicate", .string("second")),
        ("", .string("the empty key")),
    ])

    /// Round-trips `annotation` through an `open`, a `launchMethod` and a `deliver`.
    func roundTrip(_ annotation: PropertyListValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> [PropertyListValue?] {
        var decoded: [PropertyListValue?] = []
        let open = try ProtocolBytes.roundTrip(Envelope(id: 1, .open(url: "x:1", annotation: annotation)), sourceLocation: sourceLocation)
        if case .open(_, let a, _, _) = open.message { decoded.append(a) } else { decoded.append(nil) }
        let delivery = Delivery(url: "x:1", sourceApplication: "s", annotation: annotation)
        let launch = try ProtocolBytes.roundTrip(Envelope(id: 2, .launchMethod(.willFinishLaunching, delivery)), sourceLocation: sourceLocation)
        if case .launchMethod(_, let d) = launch.message { decoded.append(d.annotation) } else { decoded.append(nil) }
        let deliver = try ProtocolBytes.roundTrip(Envelope(id: 3, .deliver(delivery)), sourceLocation: sourceLocation)
        if case .deliver(let d) = deliver.message { decoded.append(d.annotation) } else { decoded.append(nil) }
        return decoded
    }

    @Test("a dictionary holding every case, nested arrays and dictionaries, survives open, launchMethod and deliver")
    func everyCaseNested() throws {
        #expect(try roundTrip(Self.everyCase) == [Self.everyCase, Self.everyCase, Self.everyCase])
    }

    @Test("each case alone as the whole annotation", arguments: [
        PropertyListValue.string("s"), .string(""), .integer(0), .integer(.min), .real(-2.75), .boolean(true), .boolean(false),
        .data([]), .data([0xFF, 0x00]), .array([]), .dictionary([]), .array([.dictionary([]), .array([])]),
    ])
    func eachCaseAlone(value: PropertyListValue) throws {
        #expect(try roundTrip(value) == [value, value, value])
    }

    @Test("dictionary keys keep their order and their duplicates")
    func dictionaryOrder() throws {
        let value = PropertyListValue.dictionary([("z", .integer(1)), ("a", .integer(2)), ("z", .integer(3)), ("m", .integer(4))])
        guard case .dictionary(let entries)?? = try roundTrip(value).first else {
            Issue.record("not a dictionary")
            return
        }
        #expect(entries.map(\.0) == ["z", "a", "z", "m"])
        #expect(entries.map(\.1) == [.integer(1), .integer(2), .integer(3), .integer(4)])
    }

    @Test("reals keep their exact bits: NaN, -0.0, subnormals")
    func realBits() throws {
        // Compared by bits: NaN is not equal to itself, and -0.0 equals 0.0.
        for d in [Double.nan, -Double.nan, -0.0, 0.0, Double.leastNonzeroMagnitude, -Double.greatestFiniteMagnitude, Double.pi] {
            let frame = Frame.encode(Envelope(id: 1, .open(url: "x:1", annotation: .real(d))))
            let decoded = try Envelope.decode(Array(frame.dropFirst(Frame.headerLength)))
            guard case .open(_, .real(let got)?, _, _) = decoded.message else {
                Issue.record("\(d) did not come back as a real: \(decoded.message)")
                continue
            }
            #expect(got.bitPattern == d.bitPattern, "\(d)")
        }
    }

    @Test("known bytes of each type tag")
    func knownBytes() {
        func encoded(_ value: PropertyListValue) -> [UInt8] {
            var w = WireWriter()
            w.plist(value)
            return w.bytes
        }
        #expect(encoded(.string("hi")) == [1, 0, 0, 0, 2, 0x68, 0x69])
        #expect(encoded(.integer(-1)) == [2, 0, 0, 0, 8] + [UInt8](repeating: 0xFF, count: 8))
        #expect(encoded(.integer(258)) == [2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2])
        #expect(encoded(.real(1.0)) == [3, 0, 0, 0, 8, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(encoded(.boolean(true)) == [4, 0, 0, 0, 1, 1])
        #expect(encoded(.boolean(false)) == [4, 0, 0, 0, 1, 0])
        #expect(encoded(.data([7, 8])) == [5, 0, 0, 0, 2, 7, 8])
        #expect(encoded(.array([.boolean(true), .boolean(false)])) == [6, 0, 0, 0, 12, 4, 0, 0, 0, 1, 1, 4, 0, 0, 0, 1, 0])
        #expect(encoded(.dictionary([("k", .boolean(true))])) == [7, 0, 0, 0, 12, 0x10, 0, 0, 0, 1, 0x6B, 4, 0, 0, 0, 1, 1])
        #expect(encoded(.array([])) == [6, 0, 0, 0, 0])
    }

    @Test("nesting up to the limit is accepted; one level more is refused", arguments: [
        ("arrays", true), ("dictionaries", false),
    ])
    func depthBoundary(label: String, arrays: Bool) throws {
        let limit = PropertyListCoding.maximumDepth
        #expect(limit == 32)
        func nested(_ levels: Int) -> PropertyListValue {
            arrays ? ProtocolBytes.nestedArrays(levels) : ProtocolBytes.nestedDictionaries(levels)
        }
        // The leaf sits at depth `levels`; depths 0 ..< limit are allowed.
        let deepest = nested(limit - 1)
        #expect(try roundTrip(deepest) == [deepest, deepest, deepest])
        let tooDeep = nested(limit)
        let expected = WireError.invalid("annotation", "nested deeper than \(limit) levels")
        for message in [
            Message.open(url: "x:1", annotation: tooDeep),
            .deliver(Delivery(url: "x:1", sourceApplication: "s", annotation: tooDeep)),
            .launchMethod(.didFinishLaunching, Delivery(url: "x:1", sourceApplication: "s", annotation: tooDeep)),
        ] {
            let body = Array(Frame.encode(Envelope(id: 1, message)).dropFirst(4))
            #expect(ProtocolBytes.decodeError(body) == expected, "\(message.kindName)")
        }
    }

    @Test("empty containers count as a level: 32 nested empty arrays pass, 33 do not")
    func emptyContainerDepth() throws {
        let limit = PropertyListCoding.maximumDepth
        let ok = ProtocolBytes.nestedArrays(limit - 1, around: .array([]))
        #expect(try roundTrip(ok) == [ok, ok, ok])
        let body = Array(Frame.encode(Envelope(id: 1, .open(url: "x:1", annotation: ProtocolBytes.nestedArrays(limit, around: .array([]))))).dropFirst(4))
        #expect(ProtocolBytes.decodeError(body) == .invalid("annotation", "nested deeper than \(limit) levels"))
    }

    @Test("a hostile, very deep annotation is refused without recursing into it")
    func hostileDepth() {
        // 2,000 nested array fields, written by hand (the encoder is not involved).
        var inner: [UInt8] = ProtocolBytes.field(1, Array("x".utf8))
        for _ in 0..<2_000 { inner = ProtocolBytes.field(6, inner) }
        let body = ProtocolBytes.body(0x10) { w in
            w.field(1, string: "x:1")
            w.field(2, inner)
        }
        #expect(ProtocolBytes.decodeError(body) == .invalid("annotation", "nested deeper than \(PropertyListCoding.maximumDepth) levels"))
    }
}
