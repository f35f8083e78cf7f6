import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Connections and the machine's queries: a lost connection, the waiting callers, the running apps.
extension LaunchStateMachineEventTests {
    @Test("a lost connection terminates the app (whatever its state); unknown or pid-less apps produce nothing")
    func disconnected() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        #expect(m.disconnected(app: "a") == [.terminate(app: "a", pid: 42, reason: .disconnected)])
        #expect(m.state(of: "a") == .active, "the state changes only when the exit arrives")
        #expect(m.exited(app: "a", status: .signaled(9), now: 1_000).isEmpty)
        #expect(m.state(of: "a") == .notRunning)

        _ = m.open(request(200), app: "b", now: 2_000)
        #expect(m.disconnected(app: "b").isEmpty, "spawn not reported yet: no pid to kill")
        m.spawned(app: "b", pid: 43)
        _ = m.checkedIn(app: "b", now: 2_001)
        #expect(m.disconnected(app: "b") == [.terminate(app: "b", pid: 43, reason: .disconnected)])
        #expect(m.disconnected(app: "nobody").isEmpty)
    }

    @Test("waitingRequests lists every unanswered token across apps, and only those")
    func waitingRequests() {
        var m = machine()
        #expect(m.waitingRequests.isEmpty)
        coldOpen(&m, app: "idle", token: 1, pid: 1)
        // a: launching, with one queued behind it.
        _ = m.open(request(10), app: "a", now: 100)
        _ = m.open(request(11), app: "a", now: 100)
        // b: vetoed (answered) but still launching, with one queued.
        _ = m.open(request(20), app: "b", now: 100)
        let sent = m.checkedIn(app: "b", now: 101)
        _ = m.phaseCompleted(app: "b", token: sentToken(sent), accepted: false, now: 102)
        _ = m.open(request(21), app: "b", now: 102)
        // idle: a warm open in flight.
        _ = m.open(request(30), app: "idle", now: 103)
        #expect(Set(m.waitingRequests) == [10, 11, 21, 30])
        #expect(m.waitingRequests.count == 4)
    }

    @Test("waitingRequests drops a request once it is vetoed, keeps its queue")
    func waitingAfterVeto() {
        var m = machine()
        _ = m.open(request(20), app: "b", now: 0)
        let sent = m.checkedIn(app: "b", now: 1)
        _ = m.open(request(21), app: "b", now: 2)
        #expect(m.waitingRequests == [20, 21])
        _ = m.phaseCompleted(app: "b", token: sentToken(sent), accepted: false, now: 3)
        #expect(m.waitingRequests == [21])
    }

    @Test("running lists the apps that are not notRunning, sorted by identifier")
    func running() {
        var m = machine()
        coldOpen(&m, app: "zeta", token: 1, pid: 1)
        coldOpen(&m, app: "alpha", token: 2, pid: 2, base: 100)
        _ = m.open(request(3), app: "mid", now: 200)
        _ = m.open(request(4), app: "failed", now: 200)
        _ = m.spawnFailed(app: "failed", reason: "x", now: 201)
        #expect(m.running.map(\.app) == ["alpha", "mid", "zeta"])
        #expect(m.running.map(\.record.state) == [.active, .launching, .background])
    }
}
