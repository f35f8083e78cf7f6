import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Withdrawing: a departed caller's queued opens are dropped.
extension LaunchStateMachineEventTests {
    @Test("a departed caller's queued opens are withdrawn; the open in progress finishes")
    func withdrawQueued() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.open(request(102), app: "a", now: 1_001).isEmpty)
        #expect(m.open(request(103), app: "a", now: 1_002).isEmpty)
        m.withdraw([101, 102])
        #expect(m.waitingRequests == [101, 103], "101 is in progress; 102 is gone")
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 2_000) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: false, method: .open, timings: [timing(.openURL, 1_000)], launchState: .hot)),
            .armDeadline(app: "a", phase: .openURL, token: 6, after: .seconds(3)),
            .deliver(app: "a", token: 6, request: request(103)),
        ])
    }

    @Test("withdrawing the only queued open of an app that never started forgets the app")
    func withdrawForgets() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.open(request(101), app: "a", now: 1)
        _ = m.deadlinePassed(app: "a", token: 1, now: 10 * Self.second)
        m.withdraw([101])
        #expect(m.exited(app: "a", status: .signaled(9), now: 10 * Self.second + 1).isEmpty, "nothing left to start")
        #expect(m.apps["a"] == nil)
    }

    @Test("withdraw returns its actions like every event: none, whether it drops queued opens, finds only an open in progress, or knows no token")
    func withdrawActions() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.open(request(102), app: "a", now: 1_001).isEmpty)
        #expect(m.withdraw([102]) == [], "a dropped queued open is answered by nobody and holds back no other")
        #expect(m.withdraw([101]) == [], "the open in progress finishes in its own time")
        #expect(m.withdraw([999]) == [])
        #expect(m.withdraw([]) == [])
        #expect(m.waitingRequests == [101])
    }
}
