import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Frame.encode → strip the 4-byte header → Envelope.decode gives back the same envelope,
/// for every message case and every optional field present or absent.
@Suite("Envelope round trip: every message")
struct EnvelopeRoundTripTests {
    static let annotation: PropertyListValue = .dictionary([
        ("string", .string("héllo 😀")),
        ("int", .integer(-42)),
        ("real", .real(2.5)),
        ("bool", .boolean(true)),
        ("data", .data([0, 1, 255])),
        ("array", .array([.string("a"), .array([.integer(1)]), .dictionary([("k", .boolean(false))])])),
    ])

    static let allTimings = [
        PhaseTiming(phase: .launch, nanoseconds: 0),
        PhaseTiming(phase: .willFinishLaunching, nanoseconds: 1),
        PhaseTiming(phase: .didFinishLaunching, nanoseconds: 123_456_789),
        PhaseTiming(phase: .openURL, nanoseconds: UInt64.max),
    ]

    static let messages: [Message] = [
        // hello: optional program and bundle path, each present or absent; empty is not absent.
        .hello(version: 1, role: .client, program: "lsopen"),
        .hello(version: 1, role: .client, program: nil),
        .hello(version: 1, role: .app, program: "xyz", bundlePath: "/apps/xyz.app"),
        .hello(version: 1, role: .app, program: nil, bundlePath: "/apps/xyz.app"),
        .hello(version: UInt64.max, role: .client, program: "", bundlePath: ""),
        // tag 5 (added in 0.5): the runtime drops a vetoed launch's delivery.
        .hello(version: 1, role: .app, program: "xyz", dropsVetoedLaunchDelivery: true),
        .welcome(version: 1, identity: "org.swift-launch-services.lsopen"),
        .welcome(version: 0, identity: ""),
        .failure(OpenError(.protocolError, "bad frame")),
        .failure(OpenError(.timeout, phase: .didFinishLaunching, "too slow")),
        .open(url: "todolist://www.acme.com?Quarterly%20Report#200806231300", annotation: nil),
        .open(url: "xyz:hello", annotation: annotation),
        .open(url: "xyz:empty", annotation: .array([])),
        // openResult: success and failure, with and without app, method, phase, timings.
        .openResult(OpenOutcome(app: "com.a", launched: true, method: .open, timings: allTimings)),
        .openResult(OpenOutcome(app: "com.a", launched: false, method: .handleOpen, timings: [PhaseTiming(phase: .openURL, nanoseconds: 5)])),
        .openResult(OpenOutcome(app: nil)),
        .openResult(OpenOutcome(app: "com.a", error: OpenError(.notHandled, phase: .openURL, "no"), launched: true, method: DeliveryMethod.none, timings: allTimings)),
        .openResult(.failure(OpenError(.vetoed, phase: .willFinishLaunching, "vetoed"), app: "com.a", launched: true, timings: Array(allTimings.prefix(2)))),
        .openResult(.failure(OpenError(.noHandler, "nobody claims zzz"))),
        // openResult of a desktop app (tags 11–16, added in 0.3): each outcome, pid, status or signal, stderr lines.
        .openResult(OpenOutcome(app: "com.a", handlerKind: .native)),
        .openResult(OpenOutcome(app: "org.example.Mail.desktop", totalNanoseconds: 7, handlerKind: .desktop, desktop: .delivered)),
        .openResult(OpenOutcome(app: "mail.desktop", launched: true, handlerKind: .desktop, desktop: .running(pid: Int32.max))),
        .openResult(OpenOutcome(app: "mail.desktop", launched: true, handlerKind: .desktop, desktop: .ended(pid: 1, status: .exited(0), stderrTail: []))),
        .openResult(OpenOutcome(app: "mail.desktop", error: OpenError(.crashed, "exited"), launched: true, handlerKind: .desktop,
                                desktop: .ended(pid: 9, status: .exited(255), stderrTail: ["first", "", "ünïcode 😀"]))),
        .openResult(OpenOutcome(app: "mail.desktop", error: OpenError(.crashed, "killed"), launched: true, handlerKind: .desktop,
                                desktop: .ended(pid: 9, status: .signaled(9), stderrTail: ["x"]))),
        .openResult(OpenOutcome(app: "mail.desktop", error: OpenError(.crashed, "unknown"), handlerKind: .desktop,
                                desktop: DesktopLaunchOutcome(kind: .exited, pid: 3))),
        .openResult(OpenOutcome(app: "mail.desktop", error: OpenError(.launchFailed, "no"), handlerKind: .desktop,
                                desktop: DesktopLaunchOutcome(kind: .failedToStart))),
        .canOpen(url: "x:y"),
        .canOpenResult(canOpen: true, app: "com.a"),
        .canOpenResult(canOpen: true, app: nil),
        .canOpenResult(canOpen: false, app: nil),
        .canOpenResult(canOpen: false, app: "com.a"),
        .query(topic: "status"),
        .query(topic: ""),
        .queryResult(json: "{\"apps\": [\"é\", \"\\n\"]}\n"),
        .command(verb: "rescan", arguments: []),
        .command(verb: "register", arguments: ["/apps/a.app"]),
        .command(verb: "default", arguments: ["xyz", "", "com.a"]),
        .launchMethod(.willFinishLaunching, Delivery(url: "a:b", sourceApplication: "src", annotation: annotation)),
        .launchMethod(.didFinishLaunching, Delivery(url: "a:b", sourceApplication: "")),
        .deliver(Delivery(url: "a://ü?q=1#f", sourceApplication: "org.example.caller", annotation: .string("note"))),
        .deliver(Delivery(url: "a:b", sourceApplication: "src")),
        // tag 7 (added in 0.5): the launch's own delivery, written at the hello.
        .deliver(Delivery(url: "a:b", sourceApplication: "src", background: true, ofLaunch: true)),
        .phaseResult(accepted: true, method: nil),
        .phaseResult(accepted: false, method: DeliveryMethod.none),
        .phaseResult(accepted: true, method: .open),
        .phaseResult(accepted: false, method: .handleOpen),
    ]

    @Test("every message survives the round trip", arguments: messages)
    func roundTrip(message: Message) throws {
        for id: UInt32 in [0, 1, 0xDEAD_BEEF, UInt32.max] {
            let envelope = Envelope(id: id, message)
            #expect(try ProtocolBytes.roundTrip(envelope) == envelope)
        }
    }

    @Test("failure: every error code, with and without a phase", arguments: OpenErrorCode.allCases)
    func failureCodes(code: OpenErrorCode) throws {
        for phase in [nil] + LaunchPhase.allCases.map(Optional.some) {
            let envelope = Envelope(id: 3, .failure(OpenError(code, phase: phase, "message for \(code.rawValue)")))
            #expect(try ProtocolBytes.roundTrip(envelope) == envelope)
        }
    }

    @Test("launchMethod carries every phase", arguments: LaunchPhase.allCases)
    func launchMethodPhases(phase: LaunchPhase) throws {
        let envelope = Envelope(id: 9, .launchMethod(phase, Delivery(url: "x:1", sourceApplication: "s", annotation: .integer(7))))
        #expect(try ProtocolBytes.roundTrip(envelope) == envelope)
    }

    @Test("notify carries every notification", arguments: AppNotification.allCases)
    func notifications(notification: AppNotification) throws {
        let envelope = Envelope(id: 0, .notify(notification))
        #expect(try ProtocolBytes.roundTrip(envelope) == envelope)
    }

    @Test("openResult carries every error code and every delivery method")
    func openResultCodesAndMethods() throws {
        for code in OpenErrorCode.allCases {
            for method in [nil, DeliveryMethod.open, .handleOpen, DeliveryMethod.none] {
                let envelope = Envelope(id: 1, .openResult(OpenOutcome(app: "a", error: OpenError(code, phase: .openURL, "m"), launched: false, method: method)))
                #expect(try ProtocolBytes.roundTrip(envelope) == envelope)
            }
        }
    }

    @Test("absent optional fields are not written at all")
    func absentFieldsNotWritten() {
        // hello without program or bundle path: exactly version and role.
        let hello = Array(Frame.encode(Envelope(id: 0, .hello(version: 1, role: .app, program: nil))).dropFirst(4))
        #expect(hello == ProtocolBytes.body(0x01, id: 0) { $0.field(1, u64: 1); $0.field(2, string: "app") })
        // A bare success: opened and launched only.
        let result = Array(Frame.encode(Envelope(id: 2, .openResult(OpenOutcome(app: nil)))).dropFirst(4))
        #expect(result == ProtocolBytes.body(0x11, id: 2) { $0.field(1, bool: true); $0.field(7, bool: false) })
        // Delivery without annotation: url and source only.
        let deliver = Array(Frame.encode(Envelope(id: 4, .deliver(Delivery(url: "u:1", sourceApplication: "s")))).dropFirst(4))
        #expect(deliver == ProtocolBytes.body(0x31, id: 4) { $0.field(2, string: "u:1"); $0.field(3, string: "s") })
    }

    @Test("a minimal hand-written openResult decodes with every optional field at its default")
    func minimalOpenResult() throws {
        let decoded = try Envelope.decode(ProtocolBytes.body(0x11) { $0.field(1, bool: true) })
        #expect(decoded == Envelope(id: 7, .openResult(OpenOutcome(app: nil, error: nil, launched: false, method: nil, timings: []))))
        let failure = try Envelope.decode(ProtocolBytes.body(0x11) {
            $0.field(1, bool: false); $0.field(3, string: "crashed"); $0.field(4, string: "boom")
        })
        #expect(failure == Envelope(id: 7, .openResult(.failure(OpenError(.crashed, "boom")))))
    }

    @Test("an opened result ignores error fields; a failed one ignores nothing")
    func openedIgnoresErrorFields() throws {
        let decoded = try Envelope.decode(ProtocolBytes.body(0x11) {
            $0.field(1, bool: true); $0.field(3, string: "crashed"); $0.field(4, string: "boom")
        })
        guard case .openResult(let outcome) = decoded.message else {
            Issue.record("expected openResult, got \(decoded.message)")
            return
        }
        #expect(outcome.opened)
        #expect(outcome.error == nil)
    }

    @Test("timings keep their order")
    func timingOrder() throws {
        let reversed = Array(Self.allTimings.reversed())
        let envelope = Envelope(id: 1, .openResult(OpenOutcome(app: "a", timings: reversed)))
        guard case .openResult(let outcome) = try ProtocolBytes.roundTrip(envelope).message else {
            Issue.record("not an openResult")
            return
        }
        #expect(outcome.timings == reversed)
    }

    @Test("a large message (3-byte length) round-trips and its prefix is big-endian")
    func largeMessage() throws {
        let json = String(repeating: "x", count: 70_000)
        let frame = Frame.encode(Envelope(id: 1, .queryResult(json: json)))
        let bodyLength = 5 + 5 + 70_000
        #expect(frame.count == 4 + bodyLength)
        #expect(Array(frame.prefix(4)) == [0x00, 0x01, 0x11, 0x7A])
        #expect(try ProtocolBytes.roundTrip(Envelope(id: 1, .queryResult(json: json))).message == .queryResult(json: json))
    }

    @Test("kind bytes and names are stable")
    func kinds() {
        let expected: [(Message, UInt8, String)] = [
            (.hello(version: 1, role: .client, program: nil), 0x01, "hello"),
            (.welcome(version: 1, identity: ""), 0x02, "welcome"),
            (.failure(OpenError(.timeout, "")), 0x03, "failure"),
            (.open(url: "", annotation: nil), 0x10, "open"),
            (.openResult(OpenOutcome(app: nil)), 0x11, "openResult"),
            (.canOpen(url: ""), 0x12, "canOpen"),
            (.canOpenResult(canOpen: true, app: nil), 0x13, "canOpenResult"),
            (.query(topic: ""), 0x20, "query"),
            (.queryResult(json: ""), 0x21, "queryResult"),
            (.command(verb: "", arguments: []), 0x22, "command"),
            (.launchMethod(.launch, Delivery(url: "", sourceApplication: "")), 0x30, "launchMethod"),
            (.deliver(Delivery(url: "", sourceApplication: "")), 0x31, "deliver"),
            (.notify(.didBecomeActive), 0x32, "notify"),
            (.phaseResult(accepted: true, method: nil), 0x33, "phaseResult"),
        ]
        for (message, kind, name) in expected {
            #expect(message.kind == kind)
            #expect(message.kindName == name)
        }
    }

    @Test("known bytes: a notification and a phase result, byte for byte")
    func knownBytes() {
        #expect(Frame.encode(Envelope(id: 0, .notify(.didBecomeActive))) ==
                [0, 0, 0, 25, 0x32, 0, 0, 0, 0, 1, 0, 0, 0, 15] + Array("didBecomeActive".utf8))
        #expect(Frame.encode(Envelope(id: 7, .phaseResult(accepted: true, method: .open))) ==
                [0, 0, 0, 20, 0x33, 0, 0, 0, 7, 1, 0, 0, 0, 1, 1, 2, 0, 0, 0, 4] + Array("open".utf8))
        #expect(Frame.encode(Envelope(id: 0x0102_0304, .canOpen(url: "x:y"))) ==
                [0, 0, 0, 13, 0x12, 1, 2, 3, 4, 1, 0, 0, 0, 3] + Array("x:y".utf8))
    }
}
