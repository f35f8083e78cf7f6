import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Crashes and launch failures: the process exiting in each phase, a spawn that fails.
extension LaunchStateMachineEventTests {
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
}
