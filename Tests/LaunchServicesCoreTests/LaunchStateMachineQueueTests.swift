import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Queues: opens for one app run one after another, behind vetoes and crashes.
extension LaunchStateMachineEventTests {
    @Test("opens for the same app queue and run one after another; a queued open produces no action until its turn")
    func queue() {
        var m = machine()
        let r100 = request(100), r101 = request(101, "x:2"), r102 = request(102, "x:3"), r103 = request(103, "x:4")
        _ = m.open(r100, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.open(r101, app: "a", now: 1).isEmpty)
        #expect(m.open(r102, app: "a", now: 2).isEmpty)
        #expect(m.apps["a"]?.pendingOpens == 3)
        #expect(m.waitingRequests == [100, 101, 102])

        // The launch proceeds for the first open only.
        #expect(m.checkedIn(app: "a", now: 10) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 2, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 2, options: r100),
        ])
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 20)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 30) == [
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 4, request: r100),
        ])
        // The first answer replies and starts the second (warm: no notification).
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 40) == [
            .reply(requestToken: 100, OpenOutcome(app: "a", launched: true, method: .open, timings: [
                timing(.launch, 10), timing(.willFinishLaunching, 10), timing(.didFinishLaunching, 10), timing(.openURL, 10),
            ], launchState: .cold)),
            .armDeadline(app: "a", phase: .openURL, token: 5, after: .seconds(3)),
            .deliver(app: "a", token: 5, request: r101),
        ])
        #expect(m.apps["a"]?.pendingOpens == 2)
        #expect(m.waitingRequests == [101, 102])
        #expect(m.open(r103, app: "a", now: 45).isEmpty, "still busy")
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 50) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: false, method: .open, timings: [timing(.openURL, 10)], launchState: .hot)),
            .armDeadline(app: "a", phase: .openURL, token: 6, after: .seconds(3)),
            .deliver(app: "a", token: 6, request: r102),
        ])
        #expect(m.phaseCompleted(app: "a", token: 6, accepted: false, method: .handleOpen, now: 55) == [
            .reply(requestToken: 102, OpenOutcome(
                app: "a", error: OpenError(.notHandled, phase: .openURL, "a did not handle x:3: handleOpen(url:) returned NO"),
                launched: false, method: .handleOpen, timings: [timing(.openURL, 5)], launchState: .hot)),
            .armDeadline(app: "a", phase: .openURL, token: 7, after: .seconds(3)),
            .deliver(app: "a", token: 7, request: r103),
        ])
        #expect(m.phaseCompleted(app: "a", token: 7, accepted: true, method: .open, now: 60) == [
            .reply(requestToken: 103, OpenOutcome(app: "a", launched: false, method: .open, timings: [timing(.openURL, 5)], launchState: .hot)),
        ])
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.waitingRequests.isEmpty)
    }

    @Test("an open queued behind a vetoed launch is delivered once the launch finishes")
    func queueAfterVeto() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.open(request(101), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: false, now: 2)
        #expect(m.waitingRequests == [101])
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 3) == [
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 4, request: request(101)),
        ])
    }

    @Test("an open queued behind a crash triggers a fresh spawn, and that launch is cold")
    func queuedAfterCrash() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.open(request(101), app: "a", now: 1).isEmpty)
        _ = m.checkedIn(app: "a", now: 5)
        #expect(m.exited(app: "a", status: .signaled(6), now: 9) == [
            .reply(requestToken: 100, .failure(
                OpenError(.crashed, phase: .willFinishLaunching, "a was killed by signal 6 (SIGABRT) during willFinishLaunching"),
                app: "a", launched: true, timings: [timing(.launch, 5), timing(.willFinishLaunching, 4)], launchState: .cold)),
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 3, after: .seconds(10)),
        ])
        #expect(m.state(of: "a") == .launching)
        #expect(m.pid(of: "a") == nil)
        #expect(m.apps["a"]?.currentPhase == .launch)
        #expect(m.waitingRequests == [101])

        m.spawned(app: "a", pid: 43)
        #expect(m.checkedIn(app: "a", now: 20) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 4, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 4, options: request(101)),
        ])
        _ = m.phaseCompleted(app: "a", token: 4, accepted: true, now: 21)
        _ = m.phaseCompleted(app: "a", token: 5, accepted: true, now: 22)
        #expect(m.phaseCompleted(app: "a", token: 6, accepted: true, method: .open, now: 23) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: true, method: .open, timings: [
                timing(.launch, 11), timing(.willFinishLaunching, 1), timing(.didFinishLaunching, 1), timing(.openURL, 1),
            ], launchState: .cold)),
        ])
        #expect(m.pid(of: "a") == 43)
    }
}
