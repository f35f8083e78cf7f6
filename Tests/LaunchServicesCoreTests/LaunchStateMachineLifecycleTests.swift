import LaunchServicesCore
import Testing

/// An app's lifecycle as one value: each stage carries its process and, in the background,
/// its grace timer's token.
extension LaunchStateMachineEventTests {
    @Test("an app's lifecycle through launch, front, background with its grace token, suspension, resumption and exit")
    func lifecycleStages() throws {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        #expect(m.apps["a"]?.lifecycle == .launching(pid: nil))
        m.spawned(app: "a", pid: 42)
        #expect(m.apps["a"]?.lifecycle == .launching(pid: 42))
        let willFinish = m.checkedIn(app: "a", now: 10)
        #expect(m.apps["a"]?.lifecycle == .launching(pid: 42))
        let didFinish = m.phaseCompleted(app: "a", token: sentToken(willFinish), accepted: true, now: 20)
        let deliver = m.phaseCompleted(app: "a", token: sentToken(didFinish), accepted: true, now: 30)
        #expect(m.apps["a"]?.lifecycle == .active(pid: 42))
        _ = m.phaseCompleted(app: "a", token: sentToken(deliver), accepted: true, method: .open, now: 40)

        let toBack = coldOpen(&m, app: "b", token: 200, pid: 43, base: 100)
        let grace = try #require(toBack.compactMap { action -> LaunchToken? in
            if case .armGrace("a", let token, _) = action { return token }
            return nil
        }.first)
        #expect(m.apps["a"]?.lifecycle == .background(pid: 42, grace: grace))
        #expect(m.apps["b"]?.lifecycle == .active(pid: 43))

        #expect(m.graceExpired(app: "a", token: grace, now: 40 * Self.second) == [.suspend(app: "a", pid: 42)])
        #expect(m.apps["a"]?.lifecycle == .suspended(pid: 42))
        #expect(m.graceExpired(app: "a", token: grace, now: 41 * Self.second).isEmpty, "its grace is over")

        let back = m.open(request(101), app: "a", now: 42 * Self.second)
        #expect(back.first == .resume(app: "a", pid: 42))
        #expect(m.apps["a"]?.lifecycle == .active(pid: 42))
        #expect(m.apps["a"]?.state == .active)
        #expect(m.apps["a"]?.pid == 42)

        _ = m.exited(app: "a", status: .signaled(9), now: 43 * Self.second)
        #expect(m.apps["a"] == nil)
        #expect(m.state(of: "a") == .notRunning)
    }

    @Test("an app attached by hand starts in the background with a grace token; an open brings it to the front, ending the grace")
    func lifecycleAttached() {
        var m = machine()
        #expect(m.attached(app: "h", pid: 7, now: 0) == [.armGrace(app: "h", token: 1, after: .seconds(30))])
        #expect(m.apps["h"]?.lifecycle == .background(pid: 7, grace: 1))
        _ = m.open(request(100), app: "h", now: 1)
        #expect(m.apps["h"]?.lifecycle == .active(pid: 7))
        #expect(m.graceExpired(app: "h", token: 1, now: 30 * Self.second).isEmpty, "the grace ended with the background")
    }
}
