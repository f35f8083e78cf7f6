import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Vetoes and refusals: a launch method returning NO, an open returning NO, method none.
extension LaunchStateMachineEventTests {
    @Test("NO from willFinishLaunching: vetoed at once, didFinishLaunching still sent, no delivery, app ends active", arguments: bothModes)
    func vetoInWillFinish(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 100)
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: false, now: 300) == inMode(prewrites, [
            .reply(requestToken: 100, .failure(
                OpenError(.vetoed, phase: .willFinishLaunching, "a refused to open x:1: willFinishLaunching returned NO"),
                app: "a", launched: true, timings: [timing(.launch, 100), timing(.willFinishLaunching, 200)], launchState: .cold)),
            .armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4)),
            .sendLaunchMethod(app: "a", phase: .didFinishLaunching, token: 3, options: r),
        ]))
        #expect(m.waitingRequests.isEmpty, "the caller has its answer")
        #expect(m.apps["a"]?.pendingOpens == 1, "the launch still finishes")
        #expect(m.state(of: "a") == .launching)

        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 400) == [.notify(app: "a", .didBecomeActive)])
        #expect(m.state(of: "a") == .active)
        #expect(m.frontmost == "a")
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.apps["a"]?.currentPhase == nil)
    }

    @Test("after a veto in willFinishLaunching, a NO from didFinishLaunching adds no second reply", arguments: bothModes)
    func vetoTwice(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: false, now: 2)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: false, now: 3) == [.notify(app: "a", .didBecomeActive)])
        #expect(m.state(of: "a") == .active)
    }

    @Test("a vetoed launch still takes the front from the previous app", arguments: bothModes)
    func vetoTakesFront(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(200), app: "b", now: 1_000)
        _ = m.checkedIn(app: "b", now: 1_001)
        _ = m.phaseCompleted(app: "b", token: 6, accepted: false, now: 1_002)
        #expect(m.phaseCompleted(app: "b", token: 7, accepted: true, now: 1_003) == [
            .notify(app: "a", .willResignActive),
            .notify(app: "a", .didEnterBackground),
            .armGrace(app: "a", token: 8, after: .seconds(30)),
            .notify(app: "b", .didBecomeActive),
        ])
        #expect(activeApps(m) == ["b"])
    }

    @Test("NO from didFinishLaunching: vetoed naming that phase, then the app becomes active, nothing delivered", arguments: bothModes)
    func vetoInDidFinish(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 100)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 300)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: false, now: 600) == [
            .reply(requestToken: 100, .failure(
                OpenError(.vetoed, phase: .didFinishLaunching, "a refused to open x:1: didFinishLaunching returned NO"),
                app: "a", launched: true, timings: [timing(.launch, 100), timing(.willFinishLaunching, 200), timing(.didFinishLaunching, 300)], launchState: .cold)),
            .notify(app: "a", .didBecomeActive),
        ])
        #expect(m.state(of: "a") == .active)
        #expect(m.frontmost == "a")
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.waitingRequests.isEmpty)
    }

    @Test("open returning NO on a warm open: notHandled, naming the delegate method", arguments: [
        (DeliveryMethod.open, "a did not handle x:1: open(url:sourceApplication:annotation:) returned NO"),
        (DeliveryMethod.handleOpen, "a did not handle x:1: handleOpen(url:) returned NO"),
    ], bothModes)
    func notHandledWarm(method: (DeliveryMethod, String), prewrites: Bool) {
        let (method, message) = method
        var m = machine(prewrites: prewrites)
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: false, method: method, now: 1_015) == [
            .reply(requestToken: 101, OpenOutcome(
                app: "a", error: OpenError(.notHandled, phase: .openURL, message),
                launched: false, method: method, timings: [timing(.openURL, 15)], launchState: .hot)),
        ])
        #expect(m.state(of: "a") == .active)
        #expect(m.apps["a"]?.pendingOpens == 0)
        // The app keeps working: the next open is delivered.
        #expect(m.open(request(102), app: "a", now: 2_000) == [
            .armDeadline(app: "a", phase: .openURL, token: 6, after: .seconds(3)),
            .deliver(app: "a", token: 6, request: request(102)),
        ])
    }

    @Test("an app that implements no URL method still counts as opened, with method none: launching it was the point", arguments: bothModes)
    func neitherMethodOpens(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: false, method: DeliveryMethod.none, now: 1_001) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: false, method: DeliveryMethod.none, timings: [timing(.openURL, 1)], launchState: .hot)),
        ])
    }

    @Test("open returning NO on a cold open: notHandled with all four timings, launched", arguments: bothModes)
    func notHandledCold(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 10)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 30)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 60)
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: false, method: .open, now: 100) == [
            .reply(requestToken: 100, OpenOutcome(
                app: "a", error: OpenError(.notHandled, phase: .openURL, "a did not handle x:1: open(url:sourceApplication:annotation:) returned NO"),
                launched: true, method: .open,
                timings: [timing(.launch, 10), timing(.willFinishLaunching, 20), timing(.didFinishLaunching, 30), timing(.openURL, 40)], launchState: .cold)),
        ])
    }
}
