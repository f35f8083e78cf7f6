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
