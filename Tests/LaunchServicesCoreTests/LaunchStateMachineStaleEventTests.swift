import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Stale events: old tokens, late answers and out-of-place check-ins change nothing.
extension LaunchStateMachineEventTests {
    @Test("stale deadlines and answers (old tokens) change nothing")
    func staleTokens() {
        var m = machine()
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.phaseCompleted(app: "a", token: 1, accepted: true, now: 1).isEmpty, "an answer under the launch token means nothing")
        #expect(m.apps["a"]?.currentPhase == .launch)
        _ = m.checkedIn(app: "a", now: 2)
        #expect(m.deadlinePassed(app: "a", token: 1, now: 3).isEmpty, "the launch deadline after check-in")
        #expect(m.phaseCompleted(app: "a", token: 99, accepted: true, now: 3).isEmpty, "a token never issued")
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 4)
        #expect(m.deadlinePassed(app: "a", token: 2, now: 5).isEmpty, "the willFinish deadline after it answered")
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: false, now: 5).isEmpty, "a repeated answer")
        #expect(m.apps["a"]?.currentPhase == .didFinishLaunching)
        #expect(m.waitingRequests == [100])
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 6)
        _ = m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 7)
        #expect(m.deadlinePassed(app: "a", token: 4, now: 8).isEmpty, "the openURL deadline after delivery")
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: false, now: 8).isEmpty)
        #expect(m.state(of: "a") == .active)
    }

    @Test("a late answer after a timeout, and a deadline with an old token, are ignored")
    func lateAfterTimeout() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        _ = m.deadlinePassed(app: "a", token: 5, now: 5_000)
        // 102 queues behind the hung app until its exit arrives.
        #expect(m.open(request(102), app: "a", now: 6_000).isEmpty)
        // Token 5 belongs to the timed-out open: its late answer and deadline change nothing.
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 6_001).isEmpty)
        #expect(m.deadlinePassed(app: "a", token: 5, now: 6_002).isEmpty)
        #expect(m.waitingRequests == [102])
        #expect(m.exited(app: "a", status: .signaled(9), now: 6_003) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 6, after: .seconds(10)),
        ])
    }

    @Test("check-ins out of place are ignored: twice, for an unknown app, for a running app")
    func staleCheckIn() {
        var m = machine()
        #expect(m.checkedIn(app: "nobody", now: 0).isEmpty)
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 1)
        #expect(m.checkedIn(app: "a", now: 2).isEmpty)
        #expect(m.apps["a"]?.currentPhase == .willFinishLaunching)
        _ = m.attached(app: "h", pid: 7, now: 0)
        #expect(m.checkedIn(app: "h", now: 3).isEmpty)
        #expect(m.phaseCompleted(app: "h", token: 2, accepted: true, now: 3).isEmpty)
        #expect(m.deadlinePassed(app: "nobody", token: 1, now: 3).isEmpty)
        #expect(m.phaseCompleted(app: "nobody", token: 1, accepted: true, now: 3).isEmpty)
    }

    @Test("a check-in arriving after the launch watchdog fired does not resume the launch")
    func checkInAfterLaunchTimeout() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.deadlinePassed(app: "a", token: 1, now: 10 * Self.second)
        #expect(m.checkedIn(app: "a", now: 10 * Self.second + 1).isEmpty)
    }

    @Test("after a launch-phase timeout, an answer is stale; one under id 0 names no phase at all")
    func tokenZeroAfterTimeout() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.deadlinePassed(app: "a", token: 2, now: 5 * Self.second + 1)
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: true, now: 5 * Self.second + 2).isEmpty)
        #expect(LaunchToken(requestID: 0) == nil, "no token is 0: such an answer never reaches the machine")
    }
}
