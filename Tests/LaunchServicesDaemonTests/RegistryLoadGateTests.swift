import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesProtocol
import NIOEmbedded
import Testing

/// While the registry loads after the socket serves, what needs it waits and is answered in
/// arrival order once it is in; a client's hello and the user's status pass; a connection's
/// requests keep their order; the wait is bounded.
@Suite("Registry load gate")
struct RegistryLoadGateTests {
    func connection(greeted: Bool, identity: String = LaunchServicesDaemon.shellIdentity) -> ClientConnection {
        let connection = ClientConnection(channel: EmbeddedChannel(), kind: .socket, identity: identity)
        connection.greeted = greeted
        return connection
    }

    let hello = Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "t"))
    let status = Envelope(id: 1, .query(topic: AdminQuery.status.topic))
    let open = Envelope(id: 2, .open(url: "s:x", annotation: nil))
    let canOpen = Envelope(id: 3, .canOpen(url: "s:x"))

    @Test("open until closed: everything passes")
    func openByDefault() {
        let gate = RegistryLoadGate()
        #expect(gate.admit(open, from: connection(greeted: true)) {} == .pass)
    }

    @Test("while loading: hello and the user's status pass; opens, an app's status and what follows a held request wait; all answered in order")
    func holdsWhatNeedsTheRegistry() {
        let gate = RegistryLoadGate()
        gate.close()
        var replayed: [String] = []
        let user = connection(greeted: false)
        #expect(gate.admit(hello, from: user) { replayed.append("hello") } == .pass)
        user.greeted = true
        #expect(gate.admit(status, from: user) { replayed.append("status") } == .pass)
        #expect(gate.admit(open, from: user) { replayed.append("open") } == .held)
        // Behind its own connection's open: it waits too, so the answers keep their order.
        #expect(gate.admit(status, from: user) { replayed.append("status after open") } == .held)
        let other = connection(greeted: true)
        #expect(gate.admit(status, from: other) { replayed.append("other status") } == .pass)
        #expect(gate.admit(canOpen, from: other) { replayed.append("canOpen") } == .held)
        let app = connection(greeted: true, identity: "com.example.app")
        #expect(gate.admit(status, from: app) { replayed.append("app status") } == .held)
        #expect(replayed.isEmpty)
        gate.open()
        #expect(replayed == ["open", "status after open", "canOpen", "app status"])
        #expect(gate.admit(open, from: user) { replayed.append("late") } == .pass)
    }

    @Test("at most maximumHeld requests wait; the next is refused; a stop answers none of them")
    func bounded() {
        let gate = RegistryLoadGate()
        gate.close()
        var replayed = 0
        let user = connection(greeted: true)
        for _ in 0..<RegistryLoadGate.maximumHeld { #expect(gate.admit(open, from: user) { replayed += 1 } == .held) }
        #expect(gate.admit(open, from: connection(greeted: true)) { replayed += 1 } == .full)
        gate.discard()
        #expect(replayed == 0)
        #expect(gate.admit(open, from: user) {} == .pass)
    }
}

/// Read-ahead: the user's open or `canOpen` of one scheme waits only for that scheme's part
/// of the registry (`RegistryService.readAhead`), each connection's requests still in order.
@Suite("Registry load gate: requests answered from a scheme read ahead")
struct RegistryLoadGateReadAheadTests {
    func connection(identity: String = LaunchServicesDaemon.shellIdentity) -> ClientConnection {
        let connection = ClientConnection(channel: EmbeddedChannel(), kind: .socket, identity: identity)
        connection.greeted = true
        return connection
    }

    func open(_ url: String, id: UInt32 = 1, returnTo: String? = nil, app: String? = nil) -> Envelope {
        Envelope(id: id, .open(url: url, annotation: nil, returnTo: returnTo, options: OpenOptions(app: app)))
    }

    func scheme(_ text: String) -> URLScheme { try! URLScheme(validating: text) }

    @Test("one read-ahead per scheme; what waits for it alone is answered in order, the rest at the load")
    func answersWhatWaitedForTheScheme() {
        let gate = RegistryLoadGate()
        var asked: [String] = []
        gate.readAhead = { asked.append($0.normalized) }
        gate.close()
        var replayed: [String] = []
        let first = connection(), second = connection()
        #expect(gate.admit(open("a:1"), from: first) { replayed.append("first a:1") } == .held)
        #expect(gate.admit(open("b:1"), from: first) { replayed.append("first b:1") } == .held)
        #expect(gate.admit(Envelope(id: 3, .canOpen(url: "a:2")), from: second) { replayed.append("second a:2") } == .held)
        #expect(gate.admit(Envelope(id: 4, .query(topic: AdminQuery.status.topic)), from: second) { replayed.append("second status") } == .held)
        #expect(asked == ["a", "b"], "one read-ahead per scheme")
        // b first: first's b:1 still waits behind its a:1.
        gate.previewedScheme(scheme("b"))
        #expect(replayed.isEmpty)
        gate.previewedScheme(scheme("a"))
        #expect(replayed == ["first a:1", "first b:1", "second a:2"], "the status behind second's canOpen waits for the load")
        // Read ahead: a new request of the scheme passes at once; another scheme's waits.
        #expect(gate.admit(open("a:3"), from: connection()) {} == .pass)
        #expect(gate.admit(open("c:1"), from: connection()) { replayed.append("c:1") } == .held)
        gate.open()
        #expect(replayed == ["first a:1", "first b:1", "second a:2", "second status", "c:1"])
    }

    @Test("an app's request, a named handler, a return, a callback parameter or a bad URL waits for the load")
    func otherRequestsWaitForTheLoad() {
        let gate = RegistryLoadGate()
        var asked: [String] = []
        gate.readAhead = { asked.append($0.normalized) }
        gate.close()
        let user = { self.connection() }
        #expect(gate.admit(open("a:1"), from: connection(identity: "com.example.app")) {} == .held)
        #expect(gate.admit(open("a:1", app: "com.example.app"), from: user()) {} == .held)
        #expect(gate.admit(open("a:1", returnTo: "com.example.app"), from: user()) {} == .held)
        #expect(gate.admit(open("a://x-callback-url/go?x-success=b://done"), from: user()) {} == .held)
        #expect(gate.admit(open("a://x-callback-url/go?x%2Derror=b://done"), from: user()) {} == .held)
        #expect(gate.admit(open("not a url"), from: user()) {} == .held)
        #expect(asked.isEmpty)
        gate.previewedScheme(scheme("a"))
        #expect(gate.heldCount == 6)
        #expect(gate.admit(open("a://x-callback-url/go?x-source=lsopen"), from: user()) {} == .pass, "x-source names no app to resolve")
    }

    @Test("at most maximumReadAheads schemes are read ahead during one load")
    func boundedReadAheads() {
        let gate = RegistryLoadGate()
        var asked = 0
        gate.readAhead = { _ in asked += 1 }
        gate.close()
        for i in 0..<(RegistryLoadGate.maximumReadAheads + 5) {
            #expect(gate.admit(Envelope(id: 1, .canOpen(url: "s\(i):x")), from: connection()) {} == .held)
        }
        #expect(asked == RegistryLoadGate.maximumReadAheads)
    }
}

/// The gate tells connections apart by their serial number: a connection freed while its
/// request waits gives its memory to the next one, which must not wait behind it.
@Suite("Registry load gate: connections by serial")
struct RegistryLoadGateSerialTests {
    @Test("a new connection does not wait behind a freed one's held request")
    func freedConnectionsDoNotHoldNewOnes() {
        let gate = RegistryLoadGate()
        gate.close()
        let status = Envelope(id: 1, .query(topic: AdminQuery.status.topic))
        var passed = 0
        for _ in 0..<50 {
            // Held, then the connection is freed (as a closed one is while the load runs).
            do {
                let gone = ClientConnection(channel: EmbeddedChannel(), kind: .socket, identity: LaunchServicesDaemon.shellIdentity)
                gone.greeted = true
                #expect(gate.admit(Envelope(id: 2, .open(url: "s:x", annotation: nil)), from: gone) {} == .held)
            }
            let next = ClientConnection(channel: EmbeddedChannel(), kind: .socket, identity: LaunchServicesDaemon.shellIdentity)
            next.greeted = true
            if gate.admit(status, from: next, replay: {}) == .pass { passed += 1 }
        }
        #expect(passed == 50, "a new connection's status waited behind a freed connection's open")
    }
}
