#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// Several opens in flight to one running app (`maximumOpensInFlightPerApp`), on the real
/// daemon in-process: each caller answered once with its own outcome, deadlines per open,
/// crashes, and turns between callers.
extension InProcessLifecycleTests {
    static let notesID = "com.example.notes"

    /// A daemon with notes running and frontmost, and a connected client per open to come.
    func warmNotes(window: Int? = nil, suspendAfter: Duration? = nil) throws -> InProcessDaemon {
        var configuration = InProcessDaemon.defaultConfiguration
        if let window { configuration.maximumOpensInFlightPerApp = window }
        if let suspendAfter { configuration.background.suspendAfter = suspendAfter }
        let daemon = InProcessDaemon(configuration: configuration, apps: [Self.notes])
        _ = try #require(daemon.connect().open("notes://0"))
        return daemon
    }

    @Test("opens from three callers are all sent to the running app before it answers the first; each hears its own answer")
    func severalInFlight() throws {
        let daemon = try warmNotes()
        let clients = (1...3).map { _ in daemon.connect() }
        let ids = clients.enumerated().map { n, client in client.send(.open(url: "notes://\(n + 1)", annotation: nil)) }
        #expect(daemon.opensInFlight(of: Self.notesID) == 3, "all three sent; the app has answered none yet")
        for (client, id) in zip(clients, ids) {
            let outcome = try #require(client.outcome(of: id))
            #expect(outcome.opened)
            #expect(outcome.launchState == .hot)
        }
        #expect(daemon.app(Self.notesID)?.deliveredURLs == ["notes://0", "notes://1", "notes://2", "notes://3"])
        #expect(daemon.opensInFlight(of: Self.notesID) == 0)
        #expect(daemon.launches(of: Self.notesID) == 1)
    }

    @Test("with maximumOpensInFlightPerApp 1 the daemon sends one open at a time")
    func windowOfOne() throws {
        let daemon = try warmNotes(window: 1)
        let clients = (1...3).map { _ in daemon.connect() }
        let ids = clients.enumerated().map { n, client in client.send(.open(url: "notes://\(n + 1)", annotation: nil)) }
        #expect(daemon.opensInFlight(of: Self.notesID) == 1)
        #expect(zip(clients, ids).allSatisfy { $0.outcome(of: $1)?.opened == true })
    }

    @Test("the app hangs on the 2nd of 3 in flight: the 1st is opened, the 2nd times out at its own deadline, the 3rd is answered timeout with it, the app is killed")
    func hangOnSecond() throws {
        let daemon = try warmNotes()
        daemon.behave(Self.notesID) { $0.openByURL["notes://2"] = .hang }
        let clients = (1...3).map { _ in daemon.connect() }
        let ids = clients.enumerated().map { n, client in client.send(.open(url: "notes://\(n + 1)", annotation: nil)) }
        #expect(clients[0].outcome(of: ids[0])?.opened == true)
        #expect(clients[1].outcome(of: ids[1]) == nil)
        #expect(daemon.app(Self.notesID)?.isHung == true)
        #expect(daemon.opensInFlight(of: Self.notesID) == 2)
        daemon.advance(by: .milliseconds(4_900))
        #expect(clients[1].outcome(of: ids[1]) == nil, "no answer before its deadline")
        #expect(clients[2].outcome(of: ids[2]) == nil)
        daemon.advance(by: .milliseconds(200))
        let hung = try #require(clients[1].outcome(of: ids[1]))
        #expect(hung.error?.code == .timeout)
        #expect(hung.error?.phase == .openURL)
        #expect(hung.error?.message.contains("did not finish openURL within 5 s") == true)
        let behind = try #require(clients[2].outcome(of: ids[2]))
        #expect(behind.error?.code == .timeout)
        #expect(behind.error?.message.contains("was terminated before it answered this open") == true, "\(behind)")
        let app = try #require(daemon.app(Self.notesID))
        #expect(!app.isAlive)
        #expect(app.deliveredURLs == ["notes://0", "notes://1", "notes://2"], "the 3rd never reached the hung delegate")
        #expect(daemon.log.filter { $0.contains("terminating com.example.notes") && $0.contains("did not finish openURL") }.count == 1, "one deadline, one kill")

        daemon.behave(Self.notesID) { $0.openByURL = [:] }
        #expect(clients[0].open("notes://4")?.launched == true, "the next open launches it afresh")
    }

    @Test("the app crashes with 3 opens in flight: each caller hears crashed in openURL; the next open is cold")
    func crashWithThreeInFlight() throws {
        let daemon = try warmNotes()
        daemon.behave(Self.notesID) { $0.openByURL["notes://1"] = .exit(3) }
        let clients = (1...3).map { _ in daemon.connect() }
        let ids = clients.enumerated().map { n, client in client.send(.open(url: "notes://\(n + 1)", annotation: nil)) }
        #expect(daemon.opensInFlight(of: Self.notesID) == 3)
        for (client, id) in zip(clients, ids) {
            let outcome = try #require(client.outcome(of: id))
            #expect(outcome.error?.code == .crashed)
            #expect(outcome.error?.phase == .openURL)
            #expect(outcome.error?.message == "com.example.notes exited with status 3 during openURL")
        }
        #expect(daemon.state(of: Self.notesID) == .notRunning)
        daemon.behave(Self.notesID) { $0.openByURL = [:] }
        #expect(clients[0].open("notes://4")?.launched == true)
    }

    @Test("with the window full, a second caller's open takes the next free place, ahead of a flooder's backlog")
    func fairWindow() throws {
        let daemon = try warmNotes(window: 2)
        let flooder = daemon.connect()
        let other = daemon.connect()
        let ids = (1...5).map { flooder.send(.open(url: "notes://a\($0)", annotation: nil)) }
        let otherID = other.send(.open(url: "notes://b1", annotation: nil))
        daemon.settle()
        #expect(daemon.app(Self.notesID)?.deliveredURLs == ["notes://0", "notes://a1", "notes://a2", "notes://b1", "notes://a3", "notes://a4", "notes://a5"])
        #expect(other.outcome(of: otherID)?.opened == true)
        #expect(ids.allSatisfy { flooder.outcome(of: $0)?.opened == true })
    }

    @Test("an app in the background with an open in flight is not suspended when its grace runs out")
    func noSuspendInFlight() throws {
        let daemon = try warmNotes(suspendAfter: .seconds(1))
        daemon.register(Self.mail)
        daemon.behave(Self.notesID) { $0.openByURL["notes://slow"] = .hang }
        let client = daemon.connect()
        let slow = client.send(.open(url: "notes://slow", annotation: nil))
        _ = try #require(client.open("mail://1"))
        #expect(daemon.state(of: Self.notesID) == .background)
        daemon.advance(by: .seconds(4))
        #expect(daemon.app(Self.notesID)?.events.contains(.signaled(SIGSTOP)) == false, "not suspended with an open in flight")
        daemon.advance(by: .seconds(2))
        #expect(client.outcome(of: slow)?.error?.code == .timeout)
        #expect(daemon.app(Self.notesID)?.events.contains(.signaled(SIGSTOP)) == false, "killed for the deadline, never stopped")
    }
}
