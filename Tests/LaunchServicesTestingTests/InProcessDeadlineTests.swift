#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// Deadline timers on the real daemon, in-process: each guards the launch or open it was
/// armed for, whatever else happens to the app meanwhile (a failed spawn, a relaunch).
extension InProcessLifecycleTests {
    @Test("a launch that fails, then a queued open's launch that succeeds: the new launch keeps its own deadline, and an app that never checks in is answered timeout at it")
    func noStaleLaunchTimer() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        // Every copy of notes starts but never says hello.
        daemon.behave(Self.notesID) { $0.checksIn = false }
        let clients = (1...3).map { _ in daemon.connect() }
        let first = clients[0].send(.open(url: "notes://1", annotation: nil))
        daemon.settle()
        #expect(daemon.launches(of: Self.notesID) == 1)
        // Two more opens queue behind the launch.
        let second = clients[1].send(.open(url: "notes://2", annotation: nil))
        let third = clients[2].send(.open(url: "notes://3", annotation: nil))
        #expect(clients[1].outcome(of: second) == nil)
        daemon.failNextLaunch(of: Self.notesID, reason: "/simulated/notes: Text file busy")

        // The first launch misses its 10 s deadline: killed. Its exit starts the second open,
        // whose launch fails; that starts the third, whose launch succeeds (and never checks in).
        daemon.advance(by: .milliseconds(10_100))
        let timedOut = try #require(clients[0].outcome(of: first))
        #expect(timedOut.error?.code == .timeout)
        #expect(timedOut.error?.phase == .launch)
        let failed = try #require(clients[1].outcome(of: second))
        #expect(failed.error?.code == .launchFailed)
        #expect(failed.error?.message.contains("Text file busy") == true, "\(failed)")
        #expect(daemon.launches(of: Self.notesID) == 2)
        #expect(clients[2].outcome(of: third) == nil, "launching")
        let relaunched = try #require(daemon.app(Self.notesID))
        #expect(relaunched.isAlive)

        // Its own launch deadline, 10 s from its spawn, ends it like the first.
        daemon.advance(by: .milliseconds(9_800))
        #expect(clients[2].outcome(of: third) == nil, "no answer before its deadline")
        daemon.advance(by: .milliseconds(400))
        let late = try #require(clients[2].outcome(of: third), "the relaunched app never checked in and was never timed out")
        #expect(late.error?.code == .timeout)
        #expect(late.error?.phase == .launch)
        #expect(!relaunched.isAlive)
        #expect(relaunched.events.last == .signaled(SIGKILL))
        #expect(daemon.state(of: Self.notesID) == .notRunning)
    }
}

/// A flood of opens to one app: its deadline measures the app's progress (each open from
/// when the app could start on it), not the callers queued in front of it.
extension InProcessLifecycleTests {
    /// notes with a 2 s `openURL` deadline, running, answering each open 0.4 s after it
    /// reached it (one at a time, as the real runtime does).
    func slowButSteadyNotes() throws -> InProcessDaemon {
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.deadlines.openURL = .seconds(2)
        let daemon = InProcessDaemon(configuration: configuration, apps: [Self.notes])
        _ = try #require(daemon.connect().open("notes://warm-up"))
        daemon.behave(Self.notesID) { $0.openDelay = .milliseconds(400) }
        return daemon
    }

    @Test("40 opens from 4 callers to an app that answers each in 0.4 s, with a 2 s deadline: every one opened, the app never killed")
    func floodOfSlowOpens() throws {
        let daemon = try slowButSteadyNotes()
        let clients = (0..<4).map { _ in daemon.connect() }
        let sent = (0..<40).map { n in (client: clients[n % 4], id: clients[n % 4].send(.open(url: "notes://flood-\(n)", annotation: nil))) }
        daemon.settle()
        #expect(daemon.opensInFlight(of: Self.notesID) == 16, "a full window: maximumOpensInFlightPerApp")
        // 40 × 0.4 s = 16 s of work; the last answer comes at 16 s.
        daemon.advance(by: .milliseconds(15_900))
        #expect(sent.last.map { $0.client.outcome(of: $0.id) } == .some(nil), "the last open is still being worked on")
        daemon.advance(by: .milliseconds(200))
        for (n, open) in sent.enumerated() {
            let outcome = try #require(open.client.outcome(of: open.id), "open \(n) unanswered")
            #expect(outcome.opened, "open \(n): \(outcome.error.map { "\($0.code): \($0.message)" } ?? "")")
        }
        let app = try #require(daemon.app(Self.notesID))
        #expect(app.isAlive)
        #expect(!app.events.contains(.signaled(SIGKILL)))
        #expect(daemon.launches(of: Self.notesID) == 1)
        #expect(app.deliveredURLs.count == 41)
        #expect(!daemon.log.contains { $0.contains("terminating") })
    }

    @Test("a flood to an app that hangs on the first: killed at that open's 2 s deadline, every open in flight answered timeout; the queued ones start a fresh copy")
    func floodToHungApp() throws {
        let daemon = try slowButSteadyNotes()
        daemon.behave(Self.notesID) { $0.openByURL["notes://flood-0"] = .hang }
        let client = daemon.connect()
        let ids = (0..<20).map { n in client.send(.open(url: "notes://flood-\(n)", annotation: nil)) }
        daemon.settle()
        let hung = try #require(daemon.app(Self.notesID))
        daemon.advance(by: .milliseconds(1_900))
        #expect(hung.isHung)
        #expect(ids.allSatisfy { client.outcome(of: $0) == nil }, "nothing answered before the deadline")
        #expect(hung.isAlive)
        daemon.advance(by: .milliseconds(200))
        #expect(!hung.isAlive)
        #expect(hung.events.last == .signaled(SIGKILL))
        let first = try #require(client.outcome(of: ids[0]))
        #expect(first.error?.code == .timeout)
        #expect(first.error?.message == "com.example.notes did not finish openURL within 2 s; it was terminated")
        for id in ids[1..<16] {
            let behind = try #require(client.outcome(of: id))
            #expect(behind.error?.code == .timeout)
            #expect(behind.error?.message.contains("was terminated before it answered this open") == true)
        }
        // The four queued behind the window went to a fresh copy, which answers them.
        daemon.advance(by: .seconds(2))
        #expect(daemon.launches(of: Self.notesID) == 2)
        #expect(ids[16...].allSatisfy { client.outcome(of: $0)?.opened == true })
    }
}
