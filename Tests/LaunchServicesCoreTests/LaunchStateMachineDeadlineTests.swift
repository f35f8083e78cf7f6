import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Deadlines: each phase's watchdog, what waits behind a timed-out open, how limits are named.
extension LaunchStateMachineEventTests {
    @Test("a missed launch-phase deadline: timeout and terminate; the transaction waits for the exit, which answers nobody twice",
          arguments: [LaunchPhase.launch, .willFinishLaunching, .didFinishLaunching], bothModes)
    func launchPhaseTimeout(phase: LaunchPhase, prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        var token: LaunchToken = 1
        var started: UInt64 = 0
        var timings: [PhaseTiming] = []
        if phase != .launch {
            token = sentToken(m.checkedIn(app: "a", now: 100))
            started = 100
            timings = [timing(.launch, 100)]
            if phase == .didFinishLaunching {
                token = sentToken(m.phaseCompleted(app: "a", token: token, accepted: true, now: 300))
                started = 300
                timings.append(timing(.willFinishLaunching, 200))
            }
        }
        let limit = Self.deadlines[phase]
        let seconds = UInt64(limit.components.seconds)
        let late = started + seconds * Self.second
        timings.append(timing(phase, seconds * Self.second))

        #expect(m.deadlinePassed(app: "a", token: token, now: late) == [
            .reply(requestToken: 100, .failure(
                OpenError(.timeout, phase: phase, "a did not finish \(phase.rawValue) within \(seconds) s; it was terminated"),
                app: "a", launched: true, timings: timings, launchState: .cold)),
            .terminate(app: "a", pid: 42, reason: .missedDeadline(phase)),
        ])
        // The transaction is kept until the exit arrives.
        #expect(m.apps["a"]?.pendingOpens == 1)
        #expect(m.apps["a"]?.currentPhase == phase)
        #expect(m.state(of: "a") == .launching)
        #expect(m.waitingRequests.isEmpty, "the caller has its answer")
        // The same deadline again, or the app's late answer, does nothing.
        #expect(m.deadlinePassed(app: "a", token: token, now: late + 1).isEmpty)
        #expect(m.phaseCompleted(app: "a", token: token, accepted: true, now: late + 2).isEmpty)
        // The exit that follows the kill produces no second reply.
        #expect(m.exited(app: "a", status: .signaled(9), now: late + 3).isEmpty)
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.apps["a"] == nil)
    }

    @Test("an open queued behind a timed-out launch waits for the exit, then launches afresh", arguments: bothModes)
    func queuedBehindTimeout(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.open(request(101), app: "a", now: 1).isEmpty)
        let timeout = m.deadlinePassed(app: "a", token: 1, now: 10 * Self.second)
        #expect(timeout.count == 2)
        #expect(!timeout.contains { if case .spawn = $0 { true } else { false } }, "no spawn while the old process is still alive")
        #expect(timeout.last == .terminate(app: "a", pid: 42, reason: .missedDeadline(.launch)))
        #expect(m.waitingRequests == [101])
        // Written at spawn, the first launch took tokens 1-3 (launch and both methods): the
        // relaunch begins at 4.
        #expect(m.exited(app: "a", status: .signaled(9), now: 10 * Self.second + 5) == (prewrites ? [
            .spawn(app: "a", prelude: LaunchStateMachine.LaunchPrelude(willFinishLaunching: 5, didFinishLaunching: 6, request: request(101))),
            .armDeadline(app: "a", phase: .launch, token: 4, after: .seconds(10)),
        ] : [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 2, after: .seconds(10)),
        ]))
        #expect(m.state(of: "a") == .launching)
        #expect(m.pid(of: "a") == nil)
        #expect(m.waitingRequests == [101])
    }

    @Test("a missed openURL deadline: timeout, then the hung app is terminated; a late answer is ignored", arguments: bothModes)
    func openURLTimeout(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        let late = 1_000 + 3 * Self.second
        #expect(m.deadlinePassed(app: "a", token: 5, now: late) == [
            .reply(requestToken: 101, .failure(
                OpenError(.timeout, phase: .openURL, "a did not finish openURL within 3 s; it was terminated"),
                app: "a", launched: false, timings: [timing(.openURL, 3 * Self.second)], launchState: .hot)),
            .terminate(app: "a", pid: 42, reason: .missedDeadline(.openURL)),
        ])
        #expect(m.waitingRequests.isEmpty, "the caller has its answer")
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: late + 1).isEmpty, "the late answer is ignored")
        #expect(m.exited(app: "a", status: .signaled(9), now: late + 2).isEmpty)
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.frontmost == nil)
        // The next open starts a fresh process instead of waiting on the hung one.
        #expect(m.open(request(102), app: "a", now: late + 3) == [
            .spawn(app: "a", prelude: prewrites ? LaunchStateMachine.LaunchPrelude(willFinishLaunching: 7, didFinishLaunching: 8, request: request(102)) : nil),
            .armDeadline(app: "a", phase: .launch, token: 6, after: .seconds(10)),
        ])
    }

    @Test("a missed openURL deadline on a cold open: launched, all four timings, terminated", arguments: bothModes)
    func openURLTimeoutCold(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 10)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 20)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 30)
        #expect(m.deadlinePassed(app: "a", token: 4, now: 30 + 3 * Self.second) == [
            .reply(requestToken: 100, .failure(
                OpenError(.timeout, phase: .openURL, "a did not finish openURL within 3 s; it was terminated"),
                app: "a", launched: true,
                timings: [timing(.launch, 10), timing(.willFinishLaunching, 10), timing(.didFinishLaunching, 10), timing(.openURL, 3 * Self.second)], launchState: .cold)),
            .terminate(app: "a", pid: 42, reason: .missedDeadline(.openURL)),
        ])
    }

    @Test("opens queued behind a hung open wait for its exit, then start a fresh process", arguments: bothModes)
    func openURLTimeoutWithQueue(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.open(request(102), app: "a", now: 1_001).isEmpty)
        let actions = m.deadlinePassed(app: "a", token: 5, now: 1_000 + 3 * Self.second)
        #expect(actions.count == 2)
        #expect(actions.last == .terminate(app: "a", pid: 42, reason: .missedDeadline(.openURL)))
        #expect(m.waitingRequests == [102], "queued, not failed")
        #expect(m.exited(app: "a", status: .signaled(9), now: 1_000 + 3 * Self.second + 5) == [
            .spawn(app: "a", prelude: prewrites ? LaunchStateMachine.LaunchPrelude(willFinishLaunching: 7, didFinishLaunching: 8, request: request(102)) : nil),
            .armDeadline(app: "a", phase: .launch, token: 6, after: .seconds(10)),
        ])
        #expect(m.waitingRequests == [102])
    }

    @Test("timeout messages give sub-second deadlines in milliseconds", arguments: bothModes)
    func millisecondDeadline(prewrites: Bool) {
        var m = LaunchStateMachine(deadlines: PhaseDeadlines(openURL: .milliseconds(1500)), prewritesLaunchMethods: prewrites)
        #expect(m.deadlines.openURL == .milliseconds(1500))
        coldOpen(&m, app: "a", token: 100, pid: 42)
        let actions = m.open(request(101), app: "a", now: 1_000)
        #expect(actions.first == .armDeadline(app: "a", phase: .openURL, token: 5, after: .milliseconds(1500)))
        guard case .reply(_, let outcome)? = m.deadlinePassed(app: "a", token: 5, now: 2_000).first else {
            Issue.record("expected a reply")
            return
        }
        #expect(outcome.error?.message == "a did not finish openURL within 1500 ms; it was terminated")
    }

    @Test("phase deadlines are looked up by phase")
    func deadlineSubscript() {
        let d = Self.deadlines
        #expect(d[.launch] == .seconds(10))
        #expect(d[.willFinishLaunching] == .seconds(5))
        #expect(d[.didFinishLaunching] == .seconds(4))
        #expect(d[.openURL] == .seconds(3))
        #expect(PhaseDeadlines() == PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(5), openURL: .seconds(5)))
        #expect(LaunchPhase.allCases.filter(\.isLaunchPhase) == [.launch, .willFinishLaunching, .didFinishLaunching])
    }
}
