import LaunchServicesCore
import Testing

/// Every transition of `LaunchStateMachine`, driven directly: events in, exact actions out.
@Suite("Launch state machine")
struct StateMachineTransitionTests {
    let deadlines = PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(4), openURL: .seconds(3))
    typealias A = LaunchStateMachine.Action

    func request(_ token: UInt64, _ url: String = "a:1") -> OpenRequest {
        OpenRequest(token: token, url: url, sourceApplication: "src", annotation: .string("note"))
    }

    /// The single reply among `actions`.
    func reply(_ actions: [A]) -> (token: UInt64, outcome: OpenOutcome)? {
        for case .reply(let token, let outcome) in actions { return (token, outcome) }
        return nil
    }

    /// Drives app `a` through a complete cold open (tokens 1…4 on a fresh machine).
    func launched(_ m: inout LaunchStateMachine, app: String = "a", token: UInt64 = 100, pid: Int32 = 42, base: UInt64 = 0) -> [A] {
        _ = m.open(request(token), app: app, now: base)
        m.spawned(app: app, pid: pid)
        var all: [A] = []
        all += m.checkedIn(app: app, now: base + 10)
        all += m.phaseCompleted(app: app, token: lastToken(all), accepted: true, now: base + 30)
        all += m.phaseCompleted(app: app, token: lastToken(all), accepted: true, now: base + 60)
        all += m.phaseCompleted(app: app, token: lastToken(all), accepted: true, method: .open, now: base + 100)
        return all
    }

    /// The token of the last phase sent in `actions`.
    func lastToken(_ actions: [A]) -> UInt64 {
        for action in actions.reversed() {
            switch action {
            case .sendLaunchMethod(_, _, let token, _), .deliver(_, let token, _): return token
            default: continue
            }
        }
        return 0
    }

    @Test("cold open: spawn → check-in → willFinish → didFinish → active → open → reply with every phase's time")
    func coldOpen() {
        var m = LaunchStateMachine(deadlines: deadlines)
        let r = request(100)
        #expect(m.open(r, app: "a", now: 0) == [.spawn(app: "a"), .armDeadline(app: "a", phase: .launch, token: 1, after: .seconds(10))])
        #expect(m.state(of: "a") == .launching)
        m.spawned(app: "a", pid: 42)
        #expect(m.pid(of: "a") == 42)
        #expect(m.checkedIn(app: "a", now: 10) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 2, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 2, options: r),
        ])
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: true, now: 30) == [
            .armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4)),
            .sendLaunchMethod(app: "a", phase: .didFinishLaunching, token: 3, options: r),
        ])
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 60) == [
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 4, request: r),
        ])
        #expect(m.state(of: "a") == .active)
        #expect(m.frontmost == "a")
        let timings = [PhaseTiming(phase: .launch, nanoseconds: 10), PhaseTiming(phase: .willFinishLaunching, nanoseconds: 20),
                       PhaseTiming(phase: .didFinishLaunching, nanoseconds: 30), PhaseTiming(phase: .openURL, nanoseconds: 40)]
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 100) == [
            .reply(requestToken: 100, OpenOutcome(app: "a", launched: true, method: .open, timings: timings)),
        ])
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.waitingRequests.isEmpty)
    }

    @Test("warm open of the frontmost app: one deliver, no notifications")
    func warmOpenFrontmost() {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = launched(&m)
        let r = request(101)
        #expect(m.open(r, app: "a", now: 200) == [.armDeadline(app: "a", phase: .openURL, token: 5, after: .seconds(3)), .deliver(app: "a", token: 5, request: r)])
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .handleOpen, now: 250) == [
            .reply(requestToken: 101, OpenOutcome(app: "a", launched: false, method: .handleOpen, timings: [PhaseTiming(phase: .openURL, nanoseconds: 50)])),
        ])
    }

    @Test("a second app coming to the front sends the first to the background; warm open brings it back")
    func frontmostSwitching() {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = launched(&m, app: "a", token: 100, pid: 42)
        let b = launched(&m, app: "b", token: 200, pid: 43, base: 1000)
        #expect(b.contains(.notify(app: "a", .willResignActive)))
        #expect(b.contains(.notify(app: "a", .didEnterBackground)))
        #expect(b.contains(.notify(app: "b", .didBecomeActive)))
        #expect(m.state(of: "a") == .background)
        #expect(m.state(of: "b") == .active)
        #expect(m.frontmost == "b")

        let r = request(300)
        let warm = m.open(r, app: "a", now: 2000)
        #expect(warm == [
            .notify(app: "b", .willResignActive), .notify(app: "b", .didEnterBackground),
            .notify(app: "a", .willEnterForeground), .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 9, after: .seconds(3)), .deliver(app: "a", token: 9, request: r),
        ])
        #expect(m.running.filter { $0.record.state == .active }.map(\.app) == ["a"])
    }

    @Test("NO from willFinishLaunching: vetoed at once, didFinish still runs, the URL is never delivered")
    func vetoInWillFinish() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 10)
        let no = m.phaseCompleted(app: "a", token: 2, accepted: false, now: 30)
        let (token, outcome) = try #require(reply(no))
        #expect(token == 100)
        #expect(outcome.error?.code == .vetoed)
        #expect(outcome.error?.phase == .willFinishLaunching)
        #expect(outcome.error?.message.contains("willFinishLaunching returned NO") == true)
        #expect(outcome.launched)
        #expect(no.contains(.sendLaunchMethod(app: "a", phase: .didFinishLaunching, token: 3, options: request(100))))
        let rest = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 60)
        #expect(rest == [.notify(app: "a", .didBecomeActive)], "no deliver, no second reply")
        #expect(m.state(of: "a") == .active)
        #expect(m.apps["a"]?.pendingOpens == 0)
    }

    @Test("NO from didFinishLaunching: vetoed naming it, app active, no deliver")
    func vetoInDidFinish() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        _ = m.checkedIn(app: "a", now: 10)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 20)
        let no = m.phaseCompleted(app: "a", token: 3, accepted: false, now: 30)
        #expect(reply(no)?.outcome.error?.phase == .didFinishLaunching)
        #expect(reply(no)?.outcome.error?.code == .vetoed)
        #expect(!no.contains { if case .deliver = $0 { return true } else { return false } })
        #expect(m.state(of: "a") == .active)
    }

    @Test("open returning NO: notHandled, with the method named; neither method: both named")
    func notHandled() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = launched(&m)
        _ = m.open(request(101), app: "a", now: 200)
        let no = try #require(reply(m.phaseCompleted(app: "a", token: 5, accepted: false, method: .open, now: 210)))
        #expect(no.outcome.error?.code == .notHandled)
        #expect(no.outcome.error?.phase == .openURL)
        #expect(no.outcome.error?.message.contains("returned NO") == true)
        _ = m.open(request(102), app: "a", now: 300)
        let none = try #require(reply(m.phaseCompleted(app: "a", token: 6, accepted: false, method: DeliveryMethod.none, now: 310)))
        #expect(none.outcome.error?.message.contains("neither") == true)
        #expect(none.outcome.error?.message.contains("handleOpen") == true)
    }

    @Test("a crash in each phase: crashed naming the phase and how it ended; state cleaned up", arguments: LaunchPhase.allCases)
    func crash(phase: LaunchPhase) throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        var token: UInt64 = 0
        if phase != .launch { token = lastToken(m.checkedIn(app: "a", now: 1)) }
        if phase == .didFinishLaunching || phase == .openURL { token = lastToken(m.phaseCompleted(app: "a", token: token, accepted: true, now: 2)) }
        if phase == .openURL { _ = m.phaseCompleted(app: "a", token: token, accepted: true, now: 3) }
        #expect(m.apps["a"]?.currentPhase == phase)
        let crashed = try #require(reply(m.exited(app: "a", status: .signaled(11), now: 9)))
        #expect(crashed.token == 100)
        #expect(crashed.outcome.error?.code == .crashed)
        #expect(crashed.outcome.error?.phase == phase)
        #expect(crashed.outcome.error?.message.contains("SIGSEGV") == true)
        #expect(crashed.outcome.error?.message.contains(phase.rawValue) == true)
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.apps["a"] == nil)
        #expect(m.frontmost == nil)
    }

    @Test("an exit status is reported as such")
    func exitStatus() {
        #expect(ExitStatus.exited(3).description == "exited with status 3")
        #expect(ExitStatus.signaled(9).description.contains("SIGKILL"))
    }

    @Test("spawn failure: launchFailed")
    func spawnFailed() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        let failed = try #require(reply(m.spawnFailed(app: "a", reason: "Permission denied", now: 5)))
        #expect(failed.outcome.error?.code == .launchFailed)
        #expect(failed.outcome.error?.message.contains("Permission denied") == true)
        #expect(m.state(of: "a") == .notRunning)
    }

    @Test("a missed launch-phase deadline: timeout + terminate; the exit that follows answers nobody twice")
    func launchWatchdog() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 2)
        let late = m.deadlinePassed(app: "a", token: 3, now: 4_000_000_002)
        let timeout = try #require(reply(late))
        #expect(timeout.outcome.error?.code == .timeout)
        #expect(timeout.outcome.error?.phase == .didFinishLaunching)
        #expect(timeout.outcome.error?.message.contains("within 4 s") == true)
        #expect(late.contains(.terminate(app: "a", pid: 42)))
        // The app's late answer and its exit produce no second reply.
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 5_000_000_000).isEmpty)
        #expect(m.exited(app: "a", status: .signaled(9), now: 5_000_000_001).isEmpty)
        #expect(m.state(of: "a") == .notRunning)
    }

    @Test("a missed openURL deadline: timeout, no terminate, the app stays active")
    func openDeadline() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = launched(&m)
        _ = m.open(request(101), app: "a", now: 200)
        let late = m.deadlinePassed(app: "a", token: 5, now: 3_000_000_300)
        #expect(reply(late)?.outcome.error?.phase == .openURL)
        #expect(!late.contains { if case .terminate = $0 { return true } else { return false } })
        #expect(m.state(of: "a") == .active)
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 4_000_000_000).isEmpty, "stale reply ignored")
    }

    @Test("stale tokens do nothing")
    func staleTokens() {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = launched(&m)
        #expect(m.deadlinePassed(app: "a", token: 2, now: 1_000).isEmpty)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: false, now: 1_000).isEmpty)
        #expect(m.checkedIn(app: "a", now: 1_000).isEmpty, "a second check-in is ignored")
        #expect(m.deadlinePassed(app: "nobody", token: 1, now: 1).isEmpty)
    }

    @Test("opens for a busy app queue and run one after another")
    func queue() throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        #expect(m.open(request(101), app: "a", now: 1).isEmpty)
        #expect(m.apps["a"]?.pendingOpens == 2)
        #expect(Set(m.waitingRequests) == [100, 101])
        _ = m.checkedIn(app: "a", now: 2)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 3)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 4)
        let done = m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 5)
        #expect(reply(done)?.token == 100)
        #expect(done.contains(.deliver(app: "a", token: 5, request: request(101))), "the queued open starts warm")
    }

    @Test("a queued open after a crash launches the app afresh")
    func queuedAfterCrash() {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.open(request(101), app: "a", now: 1)
        let after = m.exited(app: "a", status: .signaled(6), now: 2)
        #expect(reply(after)?.token == 100)
        #expect(after.contains(.spawn(app: "a")))
        #expect(m.state(of: "a") == .launching)
        #expect(m.waitingRequests == [101])
    }

    @Test("a lost connection terminates the app")
    func disconnected() {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = launched(&m)
        #expect(m.disconnected(app: "a") == [.terminate(app: "a", pid: 42)])
        #expect(m.disconnected(app: "unknown").isEmpty)
    }
}
