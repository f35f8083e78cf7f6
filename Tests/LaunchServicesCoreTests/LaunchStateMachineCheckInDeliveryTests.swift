import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. The launch's delivery written at the hello
/// (`checkedIn(… dropsVetoedDelivery: true)`, with the launch methods written at spawn): what
/// the hello writes, that the front and the delivery's phase still change when the second
/// answer is read, and that a NO from either method still stops the delivery.
extension LaunchStateMachineEventTests {
    @Test("at the hello: willFinishLaunching's deadline, then didBecomeActive and the delivery under a token taken now; the second answer only starts its clock")
    func deliveryWrittenAtCheckIn() {
        var m = machine(prewrites: true)
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.checkedIn(app: "a", now: 100, dropsVetoedDelivery: true) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 2, after: .seconds(5)),
            .notify(app: "a", .didBecomeActive),
            .deliverAtCheckIn(app: "a", token: 4, request: r),
        ])
        // The daemon's model has not moved: still launching, not frontmost.
        #expect(m.state(of: "a") == .launching)
        #expect(m.frontmost == nil)
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: true, now: 300) == [.armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4))])
        // Nothing is written now: didBecomeActive and the delivery are on the connection.
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 600) == [.armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3))])
        #expect(m.state(of: "a") == .active)
        #expect(m.frontmost == "a")
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 1_000) == [
            .reply(requestToken: 100, OpenOutcome(app: "a", launched: true, method: .open,
                                                  timings: [timing(.launch, 100), timing(.willFinishLaunching, 200), timing(.didFinishLaunching, 300), timing(.openURL, 400)],
                                                  launchState: .cold)),
        ])
    }

    @Test("a NO from either launch method: the caller hears vetoed at once, the app still becomes frontmost, no delivery's phase begins (the runtime dropped it)",
          arguments: [LaunchPhase.willFinishLaunching, .didFinishLaunching])
    func vetoWithDeliveryWrittenAtCheckIn(vetoedIn: LaunchPhase) {
        var m = machine(prewrites: true)
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 100, dropsVetoedDelivery: true)
        let vetoed = Action.reply(requestToken: 100, .failure(
            OpenError(.vetoed, phase: vetoedIn, "a refused to open x:1: \(vetoedIn.rawValue) returned NO"),
            app: "a", launched: true, timings: vetoedIn == .willFinishLaunching ? [timing(.launch, 100), timing(.willFinishLaunching, 200)]
                : [timing(.launch, 100), timing(.willFinishLaunching, 200), timing(.didFinishLaunching, 300)], launchState: .cold))
        let first = m.phaseCompleted(app: "a", token: 2, accepted: vetoedIn != .willFinishLaunching, now: 300)
        let second = m.phaseCompleted(app: "a", token: 3, accepted: vetoedIn != .didFinishLaunching, now: 600)
        if vetoedIn == .willFinishLaunching {
            #expect(first == [vetoed, .armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4))])
            #expect(second.isEmpty)
        } else {
            #expect(first == [.armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4))])
            #expect(second == [vetoed])
        }
        #expect(m.frontmost == "a")
        #expect(m.state(of: "a") == .active)
        #expect(m.apps["a"]?.opensInFlight == 0)
        // An answer under the dropped delivery's token (a runtime that ran it anyway) is ignored.
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 700).isEmpty)
        // The next open is delivered as to any running app.
        let next = request(101, "x:2")
        #expect(m.open(next, app: "a", now: 800) == [
            .armDeadline(app: "a", phase: .openURL, token: 5, after: .seconds(3)),
            .deliver(app: "a", token: 5, request: next),
        ])
    }

    @Test("in the background: no didBecomeActive at the hello, and the frontmost app keeps the front")
    func backgroundDeliveryWrittenAtCheckIn() {
        var m = machine(prewrites: true)
        _ = coldOpen(&m, app: "front", token: 90, pid: 41)
        var r = request(100)
        r.background = true
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        let written = m.checkedIn(app: "a", now: 100, dropsVetoedDelivery: true)
        #expect(written.contains(.deliverAtCheckIn(app: "a", token: 8, request: r)))
        #expect(!written.contains { if case .notify = $0 { true } else { false } })
        _ = m.phaseCompleted(app: "a", token: 6, accepted: true, now: 300)
        #expect(m.phaseCompleted(app: "a", token: 7, accepted: true, now: 600) == [.armDeadline(app: "a", phase: .openURL, token: 8, after: .seconds(3))])
        #expect(m.frontmost == "front")
        #expect(m.state(of: "a") == .background)
    }

    @Test("another app frontmost: it resigns when the second answer is read, as before; only the new app's didBecomeActive went early")
    func frontChangesWhenTheSecondAnswerIsRead() {
        var m = LaunchStateMachine(deadlines: Self.deadlines, background: BackgroundPolicy(suspendAfter: .seconds(30)), prewritesLaunchMethods: true)
        _ = coldOpen(&m, app: "front", token: 90, pid: 41)
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 100, dropsVetoedDelivery: true)
        #expect(m.frontmost == "front")
        _ = m.phaseCompleted(app: "a", token: 6, accepted: true, now: 300)
        #expect(m.phaseCompleted(app: "a", token: 7, accepted: true, now: 600) == [
            .notify(app: "front", .willResignActive),
            .notify(app: "front", .didEnterBackground),
            .armGrace(app: "front", token: 9, after: .seconds(30)),
            .armDeadline(app: "a", phase: .openURL, token: 8, after: .seconds(3)),
        ])
        #expect(m.frontmost == "a")
    }

    @Test("opens queued behind the launch join the delivery written at the hello when the second answer is read, in order")
    func queuedOpensFollowTheDeliveryWrittenAtCheckIn() {
        var m = LaunchStateMachine(deadlines: Self.deadlines, maximumOpensInFlight: 4, prewritesLaunchMethods: true)
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        let queued = request(101, "x:2")
        #expect(m.open(queued, app: "a", now: 10).isEmpty)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 100, dropsVetoedDelivery: true)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 300)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 600) == [
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 5, request: queued),
        ])
        #expect(m.apps["a"]?.opensInFlight == 2)
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 700).contains { if case .reply(100, _) = $0 { true } else { false } })
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 800).contains { if case .reply(101, _) = $0 { true } else { false } })
    }

    @Test("only with the launch methods written at spawn: sent one by one, a runtime's claim changes nothing")
    func noDeliveryAtCheckInWithoutPrelude() {
        var m = machine(prewrites: false)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        let actions = m.checkedIn(app: "a", now: 100, dropsVetoedDelivery: true)
        #expect(!actions.contains { if case .deliverAtCheckIn = $0 { true } else { false } })
        #expect(!actions.contains { if case .notify = $0 { true } else { false } })
    }
}
