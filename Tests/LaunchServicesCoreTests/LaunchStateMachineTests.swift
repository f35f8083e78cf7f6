import LaunchServicesCore
import Testing

/// `LaunchStateMachine` driven directly: each event in, the exact list of actions out.
/// Times are given as `now:` values so every phase's duration in a reply can be checked.
@Suite("LaunchStateMachine: every transition, exact actions")
struct LaunchStateMachineEventTests {
    typealias Action = LaunchStateMachine.Action

    static let deadlines = PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(4), openURL: .seconds(3))
    static let second: UInt64 = 1_000_000_000

    func machine() -> LaunchStateMachine { LaunchStateMachine(deadlines: Self.deadlines) }

    func request(_ token: UInt64, _ url: String = "x:1") -> OpenRequest {
        OpenRequest(token: token, url: url, sourceApplication: "org.example.caller", annotation: .dictionary([("k", .integer(1))]))
    }

    func timing(_ phase: LaunchPhase, _ nanoseconds: UInt64) -> PhaseTiming {
        PhaseTiming(phase: phase, nanoseconds: nanoseconds)
    }

    /// The token of the last phase sent (launch method or delivery) among `actions`.
    func sentToken(_ actions: [Action], sourceLocation: SourceLocation = #_sourceLocation) -> UInt64 {
        for action in actions.reversed() {
            switch action {
            case .sendLaunchMethod(_, _, let token, _), .deliver(_, let token, _): return token
            default: continue
            }
        }
        Issue.record("no phase was sent in \(actions)", sourceLocation: sourceLocation)
        return 0
    }

    /// The apps whose state is `.active`.
    func activeApps(_ m: LaunchStateMachine) -> [String] {
        m.running.filter { $0.record.state == .active }.map(\.app)
    }

    /// Drives a complete cold open of `app` (every launch method accepted, delivered with
    /// `open`), starting at `base`; returns every action produced after the open.
    @discardableResult
    func coldOpen(_ m: inout LaunchStateMachine, app: String, token: UInt64, pid: Int32, base: UInt64 = 0) -> [Action] {
        _ = m.open(request(token), app: app, now: base)
        m.spawned(app: app, pid: pid)
        var all: [Action] = []
        let willFinish = m.checkedIn(app: app, now: base + 10)
        all += willFinish
        let didFinish = m.phaseCompleted(app: app, token: sentToken(willFinish), accepted: true, now: base + 20)
        all += didFinish
        let deliver = m.phaseCompleted(app: app, token: sentToken(didFinish), accepted: true, now: base + 30)
        all += deliver
        all += m.phaseCompleted(app: app, token: sentToken(deliver), accepted: true, method: .open, now: base + 40)
        return all
    }

    // MARK: Cold and warm opens

    @Test("cold open: spawn, check-in, willFinish, didFinish, active, deliver, reply with all four timings")
    func coldOpenExact() {
        var m = machine()
        let r = request(100, "todolist://www.acme.com?Quarterly%20Report#200806231300")

        #expect(m.open(r, app: "a", now: 1_000) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 1, after: .seconds(10)),
        ])
        #expect(m.state(of: "a") == .launching)
        #expect(m.pid(of: "a") == nil)
        #expect(m.apps["a"]?.currentPhase == .launch)
        #expect(m.apps["a"]?.pendingOpens == 1)
        #expect(m.waitingRequests == [100])
        #expect(m.frontmost == nil)

        m.spawned(app: "a", pid: 4242)
        #expect(m.pid(of: "a") == 4242)

        #expect(m.checkedIn(app: "a", now: 1_250) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 2, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 2, options: r),
        ])
        #expect(m.state(of: "a") == .launching)
        #expect(m.apps["a"]?.currentPhase == .willFinishLaunching)

        #expect(m.phaseCompleted(app: "a", token: 2, accepted: true, now: 1_600) == [
            .armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4)),
            .sendLaunchMethod(app: "a", phase: .didFinishLaunching, token: 3, options: r),
        ])
        #expect(m.state(of: "a") == .launching)
        #expect(m.frontmost == nil)

        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 2_100) == [
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 4, request: r),
        ])
        #expect(m.state(of: "a") == .active)
        #expect(m.frontmost == "a")
        #expect(m.apps["a"]?.currentPhase == .openURL)

        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 2_900) == [
            .reply(requestToken: 100, OpenOutcome(app: "a", launched: true, method: .open, timings: [
                timing(.launch, 250), timing(.willFinishLaunching, 350), timing(.didFinishLaunching, 500), timing(.openURL, 800),
            ], launchState: .cold)),
        ])
        #expect(m.state(of: "a") == .active)
        #expect(m.pid(of: "a") == 4242)
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.apps["a"]?.currentPhase == nil)
        #expect(m.waitingRequests.isEmpty)
        #expect(m.running.map(\.app) == ["a"])
    }

    @Test("a cold open delivered through the legacy handleOpen reports that method")
    func coldOpenHandleOpen() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 2)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 3)
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .handleOpen, now: 5) == [
            .reply(requestToken: 100, OpenOutcome(app: "a", launched: true, method: .handleOpen, timings: [
                timing(.launch, 1), timing(.willFinishLaunching, 1), timing(.didFinishLaunching, 1), timing(.openURL, 2),
            ], launchState: .cold)),
        ])
    }

    @Test("warm open of the frontmost app: no notifications, only the delivery")
    func warmOpenFrontmost() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        let r = request(101)
        #expect(m.open(r, app: "a", now: 1_000) == [
            .armDeadline(app: "a", phase: .openURL, token: 5, after: .seconds(3)),
            .deliver(app: "a", token: 5, request: r),
        ])
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 1_070) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: false, method: .open, timings: [timing(.openURL, 70)], launchState: .hot)),
        ])
        #expect(m.state(of: "a") == .active)
    }

    @Test("a second app launching sends the first to the background; a warm open brings it back to the front")
    func warmOpenFromBackground() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)

        // b launches: a stays frontmost until b has finished launching.
        _ = m.open(request(200), app: "b", now: 1_000)
        m.spawned(app: "b", pid: 43)
        _ = m.checkedIn(app: "b", now: 1_010)
        _ = m.phaseCompleted(app: "b", token: 6, accepted: true, now: 1_020)
        #expect(m.frontmost == "a")
        #expect(m.state(of: "a") == .active)
        #expect(m.state(of: "b") == .launching)
        // The production policy: a background app is suspended after its grace (30 s).
        #expect(m.phaseCompleted(app: "b", token: 7, accepted: true, now: 1_030) == [
            .notify(app: "a", .willResignActive),
            .notify(app: "a", .didEnterBackground),
            .armGrace(app: "a", token: 8, after: .seconds(30)),
            .notify(app: "b", .didBecomeActive),
            .armDeadline(app: "b", phase: .openURL, token: 9, after: .seconds(3)),
            .deliver(app: "b", token: 9, request: request(200)),
        ])
        #expect(m.state(of: "a") == .background)
        #expect(m.state(of: "b") == .active)
        #expect(m.frontmost == "b")
        #expect(activeApps(m) == ["b"])
        _ = m.phaseCompleted(app: "b", token: 9, accepted: true, method: .open, now: 1_040)

        // Warm open of a, in the background.
        let r = request(300)
        #expect(m.open(r, app: "a", now: 2_000) == [
            .notify(app: "b", .willResignActive),
            .notify(app: "b", .didEnterBackground),
            .armGrace(app: "b", token: 10, after: .seconds(30)),
            .notify(app: "a", .willEnterForeground),
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 11, after: .seconds(3)),
            .deliver(app: "a", token: 11, request: r),
        ])
        #expect(m.state(of: "a") == .active)
        #expect(m.state(of: "b") == .background)
        #expect(m.frontmost == "a")
        #expect(activeApps(m) == ["a"])
        #expect(m.phaseCompleted(app: "a", token: 11, accepted: true, method: .handleOpen, now: 2_070) == [
            .reply(requestToken: 300, OpenOutcome(app: "a", launched: false, method: .handleOpen, timings: [timing(.openURL, 70)], launchState: .warm)),
        ])
        #expect(m.pid(of: "a") == 42)
        #expect(m.pid(of: "b") == 43)
    }

    @Test("only one app is ever frontmost, however opens alternate")
    func onlyOneFrontmost() {
        var m = machine()
        coldOpen(&m, app: "a", token: 1, pid: 1)
        coldOpen(&m, app: "b", token: 2, pid: 2, base: 100)
        coldOpen(&m, app: "c", token: 3, pid: 3, base: 200)
        #expect(activeApps(m) == ["c"])
        var token: UInt64 = 10
        for app in ["a", "c", "b", "b", "a", "c"] {
            let actions = m.open(request(token), app: app, now: 1_000 + token)
            _ = m.phaseCompleted(app: app, token: sentToken(actions), accepted: true, method: .open, now: 1_001 + token)
            #expect(activeApps(m) == [app])
            #expect(m.frontmost == app)
            #expect(m.running.filter { $0.record.state == .background }.count == 2)
            token += 1
        }
    }

    @Test("an app started by hand attaches in the background; an open brings it forward warm")
    func attached() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.attached(app: "h", pid: 77, now: 0)
        #expect(m.state(of: "h") == .background)
        #expect(m.pid(of: "h") == 77)
        #expect(m.frontmost == "a")
        _ = m.attached(app: "h", pid: 78, now: 0)
        #expect(m.pid(of: "h") == 77, "a second attach is ignored")
        _ = m.attached(app: "a", pid: 99, now: 0)
        #expect(m.pid(of: "a") == 42, "attaching a running app changes nothing")
        #expect(m.state(of: "a") == .active)

        let r = request(200)
        #expect(m.open(r, app: "h", now: 500) == [
            .notify(app: "a", .willResignActive),
            .notify(app: "a", .didEnterBackground),
            .armGrace(app: "a", token: 6, after: .seconds(30)),
            .notify(app: "h", .willEnterForeground),
            .notify(app: "h", .didBecomeActive),
            .armDeadline(app: "h", phase: .openURL, token: 7, after: .seconds(3)),
            .deliver(app: "h", token: 7, request: r),
        ])
        #expect(m.phaseCompleted(app: "h", token: 7, accepted: true, method: .open, now: 510) == [
            .reply(requestToken: 200, OpenOutcome(app: "h", launched: false, method: .open, timings: [timing(.openURL, 10)], launchState: .warm)),
        ])
    }

    @Test("opens for different apps proceed concurrently")
    func concurrentApps() {
        var m = machine()
        #expect(m.open(request(1), app: "a", now: 0) == [.spawn(app: "a"), .armDeadline(app: "a", phase: .launch, token: 1, after: .seconds(10))])
        #expect(m.open(request(2), app: "b", now: 0) == [.spawn(app: "b"), .armDeadline(app: "b", phase: .launch, token: 2, after: .seconds(10))])
        #expect(m.state(of: "a") == .launching)
        #expect(m.state(of: "b") == .launching)
        #expect(Set(m.waitingRequests) == [1, 2])
    }

    // MARK: Vetoes and refusals

    @Test("NO from willFinishLaunching: vetoed at once, didFinishLaunching still sent, no delivery, app ends active")
    func vetoInWillFinish() {
        var m = machine()
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 100)
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: false, now: 300) == [
            .reply(requestToken: 100, .failure(
                OpenError(.vetoed, phase: .willFinishLaunching, "a refused to open x:1: willFinishLaunching returned NO"),
                app: "a", launched: true, timings: [timing(.launch, 100), timing(.willFinishLaunching, 200)], launchState: .cold)),
            .armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4)),
            .sendLaunchMethod(app: "a", phase: .didFinishLaunching, token: 3, options: r),
        ])
        #expect(m.waitingRequests.isEmpty, "the caller has its answer")
        #expect(m.apps["a"]?.pendingOpens == 1, "the launch still finishes")
        #expect(m.state(of: "a") == .launching)

        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 400) == [.notify(app: "a", .didBecomeActive)])
        #expect(m.state(of: "a") == .active)
        #expect(m.frontmost == "a")
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.apps["a"]?.currentPhase == nil)
    }

    @Test("after a veto in willFinishLaunching, a NO from didFinishLaunching adds no second reply")
    func vetoTwice() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: false, now: 2)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: false, now: 3) == [.notify(app: "a", .didBecomeActive)])
        #expect(m.state(of: "a") == .active)
    }

    @Test("a vetoed launch still takes the front from the previous app")
    func vetoTakesFront() {
        var m = machine()
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

    @Test("NO from didFinishLaunching: vetoed naming that phase, then the app becomes active, nothing delivered")
    func vetoInDidFinish() {
        var m = machine()
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
    ])
    func notHandledWarm(method: DeliveryMethod, message: String) {
        var m = machine()
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

    @Test("an app that implements no URL method still counts as opened, with method none: launching it was the point")
    func neitherMethodOpens() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: false, method: DeliveryMethod.none, now: 1_001) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: false, method: DeliveryMethod.none, timings: [timing(.openURL, 1)], launchState: .hot)),
        ])
    }

    @Test("open returning NO on a cold open: notHandled with all four timings, launched")
    func notHandledCold() {
        var m = machine()
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

    // MARK: Crashes and launch failures

    @Test("the process exiting in each phase: crashed, naming that phase and the exit status", arguments: LaunchPhase.allCases)
    func crashInPhase(phase: LaunchPhase) {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        var timings = [timing(.launch, 50)]
        if phase != .launch {
            let sent = m.checkedIn(app: "a", now: 10)
            timings = [timing(.launch, 10), timing(.willFinishLaunching, 40)]
            if phase != .willFinishLaunching {
                let next = m.phaseCompleted(app: "a", token: sentToken(sent), accepted: true, now: 20)
                timings = [timing(.launch, 10), timing(.willFinishLaunching, 10), timing(.didFinishLaunching, 30)]
                if phase == .openURL {
                    _ = m.phaseCompleted(app: "a", token: sentToken(next), accepted: true, now: 30)
                    timings = [timing(.launch, 10), timing(.willFinishLaunching, 10), timing(.didFinishLaunching, 10), timing(.openURL, 20)]
                }
            }
        }
        #expect(m.apps["a"]?.currentPhase == phase)
        #expect(m.exited(app: "a", status: .exited(3), now: 50) == [
            .reply(requestToken: 100, .failure(
                OpenError(.crashed, phase: phase, "a exited with status 3 during \(phase.rawValue)"),
                app: "a", launched: true, timings: timings, launchState: .cold)),
        ])
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.pid(of: "a") == nil)
        #expect(m.apps["a"] == nil, "nothing is left of the app")
        #expect(m.frontmost == nil)
        #expect(m.waitingRequests.isEmpty)
        #expect(m.running.isEmpty)
    }

    @Test("a crash during a warm open: crashed in openURL, not launched; a signal is named")
    func crashWarm() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.exited(app: "a", status: .signaled(11), now: 1_005) == [
            .reply(requestToken: 101, .failure(
                OpenError(.crashed, phase: .openURL, "a was killed by signal 11 (SIGSEGV) during openURL"),
                app: "a", launched: false, timings: [timing(.openURL, 5)], launchState: .hot)),
        ])
        #expect(m.frontmost == nil)
        #expect(m.state(of: "a") == .notRunning)
    }

    @Test("an idle app exiting answers nobody; a background app exiting leaves the frontmost alone")
    func idleExit() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        coldOpen(&m, app: "b", token: 200, pid: 43, base: 100)
        #expect(m.exited(app: "a", status: .exited(0), now: 1_000).isEmpty)
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.frontmost == "b")
        #expect(m.exited(app: "b", status: .exited(0), now: 1_001).isEmpty)
        #expect(m.frontmost == nil)
        #expect(m.running.isEmpty)
        #expect(m.exited(app: "nobody", status: .exited(1), now: 1_002).isEmpty)
    }

    @Test("a spawn failure answers launchFailed with the reason; the app is not running")
    func spawnFailed() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        #expect(m.spawnFailed(app: "a", reason: "No such file or directory", now: 7) == [
            .reply(requestToken: 100, .failure(
                OpenError(.launchFailed, phase: .launch, "could not launch a: No such file or directory"),
                app: "a", launched: true, timings: [timing(.launch, 7)], launchState: .cold)),
        ])
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.pid(of: "a") == nil)
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.running.isEmpty)
        #expect(m.waitingRequests.isEmpty)
    }

    @Test("spawnFailed outside the launch phase, or for an unknown app, does nothing")
    func spawnFailedIgnored() {
        var m = machine()
        #expect(m.spawnFailed(app: "nobody", reason: "x", now: 0).isEmpty)
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 1)
        #expect(m.spawnFailed(app: "a", reason: "late", now: 2).isEmpty)
        #expect(m.apps["a"]?.currentPhase == .willFinishLaunching)
        #expect(m.waitingRequests == [100])
    }

    @Test("a spawn failure with an open queued behind it: the queued open tries a fresh spawn")
    func spawnFailedWithQueue() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.open(request(101), app: "a", now: 1)
        let actions = m.spawnFailed(app: "a", reason: "Permission denied", now: 5)
        #expect(actions == [
            .reply(requestToken: 100, .failure(
                OpenError(.launchFailed, phase: .launch, "could not launch a: Permission denied"),
                app: "a", launched: true, timings: [timing(.launch, 5)], launchState: .cold)),
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 2, after: .seconds(10)),
        ])
        #expect(m.state(of: "a") == .launching)
        #expect(m.waitingRequests == [101])
    }

    // MARK: Deadlines

    @Test("a missed launch-phase deadline: timeout and terminate; the transaction waits for the exit, which answers nobody twice",
          arguments: [LaunchPhase.launch, .willFinishLaunching, .didFinishLaunching])
    func launchPhaseTimeout(phase: LaunchPhase) {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        var token: UInt64 = 1
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

    @Test("an open queued behind a timed-out launch waits for the exit, then launches afresh")
    func queuedBehindTimeout() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.open(request(101), app: "a", now: 1).isEmpty)
        let timeout = m.deadlinePassed(app: "a", token: 1, now: 10 * Self.second)
        #expect(timeout.count == 2)
        #expect(!timeout.contains(.spawn(app: "a")), "no spawn while the old process is still alive")
        #expect(timeout.last == .terminate(app: "a", pid: 42, reason: .missedDeadline(.launch)))
        #expect(m.waitingRequests == [101])
        #expect(m.exited(app: "a", status: .signaled(9), now: 10 * Self.second + 5) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 2, after: .seconds(10)),
        ])
        #expect(m.state(of: "a") == .launching)
        #expect(m.pid(of: "a") == nil)
        #expect(m.waitingRequests == [101])
    }

    @Test("a missed openURL deadline: timeout, then the hung app is terminated; a late answer is ignored")
    func openURLTimeout() {
        var m = machine()
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
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 6, after: .seconds(10)),
        ])
    }

    @Test("a missed openURL deadline on a cold open: launched, all four timings, terminated")
    func openURLTimeoutCold() {
        var m = machine()
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

    @Test("opens queued behind a hung open wait for its exit, then start a fresh process")
    func openURLTimeoutWithQueue() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.open(request(101), app: "a", now: 1_000)
        #expect(m.open(request(102), app: "a", now: 1_001).isEmpty)
        let actions = m.deadlinePassed(app: "a", token: 5, now: 1_000 + 3 * Self.second)
        #expect(actions.count == 2)
        #expect(actions.last == .terminate(app: "a", pid: 42, reason: .missedDeadline(.openURL)))
        #expect(m.waitingRequests == [102], "queued, not failed")
        #expect(m.exited(app: "a", status: .signaled(9), now: 1_000 + 3 * Self.second + 5) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 6, after: .seconds(10)),
        ])
        #expect(m.waitingRequests == [102])
    }

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

    @Test("timeout messages give sub-second deadlines in milliseconds")
    func millisecondDeadline() {
        var m = LaunchStateMachine(deadlines: PhaseDeadlines(openURL: .milliseconds(1500)))
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

    // MARK: Stale events

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

    @Test("after a launch-phase timeout, an answer under token 0 is as stale as any other")
    func tokenZeroAfterTimeout() {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.deadlinePassed(app: "a", token: 2, now: 5 * Self.second + 1)
        #expect(m.phaseCompleted(app: "a", token: 0, accepted: true, now: 5 * Self.second + 2).isEmpty)
    }

    // MARK: Queues

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

    // MARK: Connections and shutdown

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
