import LaunchServicesCore
import Testing

/// Background apps are suspended after a grace, resumed by the next open, and the
/// least recently used suspended app is terminated when too many are alive.
@Suite("Background suspension and the live-app limit")
struct BackgroundSuspensionTests {
    typealias A = LaunchStateMachine.Action
    static let second: UInt64 = 1_000_000_000

    func machine(grace: Duration? = .seconds(5), limit: Int = 16) -> LaunchStateMachine {
        LaunchStateMachine(background: BackgroundPolicy(suspendAfter: grace, maximumLiveApps: limit))
    }

    func request(_ token: LaunchToken, _ url: String = "x:1") -> OpenRequest {
        OpenRequest(token: token, url: url, sourceApplication: "src")
    }

    /// A complete cold open of `app`; returns every action.
    @discardableResult
    func launch(_ m: inout LaunchStateMachine, _ app: String, token: LaunchToken, pid: Int32, at t: UInt64) -> [A] {
        var all = m.open(request(token), app: app, now: t)
        m.spawned(app: app, pid: pid)
        all += m.checkedIn(app: app, now: t + 1)
        for _ in 0..<3 {
            guard let phase = all.reversed().compactMap({ action -> LaunchToken? in
                switch action {
                case .sendLaunchMethod(_, _, let token, _), .deliver(_, let token, _): return token
                default: return nil
                }
            }).first else {
                Issue.record("no phase was sent in \(all)")
                return all
            }
            all += m.phaseCompleted(app: app, token: phase, accepted: true, method: .open, now: t + 2)
        }
        return all
    }

    func graceToken(_ actions: [A], for app: String) -> LaunchToken? {
        for case .armGrace(let a, let token, _) in actions where a == app { return token }
        return nil
    }

    @Test("entering the background arms the grace; when it runs out the app is suspended")
    func suspendAfterGrace() throws {
        var m = machine()
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let actions = launch(&m, "b", token: 101, pid: 42, at: 10)
        #expect(actions.contains(.notify(app: "a", .didEnterBackground)))
        let token = try #require(graceToken(actions, for: "a"))
        #expect(actions.contains(.armGrace(app: "a", token: token, after: .seconds(5))))
        #expect(m.graceExpired(app: "a", token: token, now: 5 * Self.second) == [.suspend(app: "a", pid: 41)])
        #expect(m.state(of: "a") == .suspended)
        #expect(m.graceExpired(app: "a", token: token, now: 6 * Self.second).isEmpty, "once")
    }

    @Test("a warm open resumes a suspended app before it comes to the front")
    func resumeOnOpen() throws {
        var m = machine()
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let token = try #require(graceToken(launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        _ = m.graceExpired(app: "a", token: token, now: 20)
        let warm = m.open(request(102, "x:2"), app: "a", now: 30)
        #expect(Array(warm.prefix(6)) == [
            .resume(app: "a", pid: 41),
            .notify(app: "b", .willResignActive), .notify(app: "b", .didEnterBackground),
            warm[3],  // b's grace
            .notify(app: "a", .willEnterForeground), .notify(app: "a", .didBecomeActive),
        ])
        #expect(graceToken(warm, for: "b") != nil)
        #expect(m.state(of: "a") == .active)
    }

    @Test("a stale grace (the app came back to the front since) suspends nothing")
    func staleGrace() throws {
        var m = machine()
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let token = try #require(graceToken(launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        _ = m.open(request(102, "x:2"), app: "a", now: 20)
        #expect(m.graceExpired(app: "a", token: token, now: 30).isEmpty)
        #expect(m.state(of: "a") != .suspended)
    }

    @Test("a background app still busy with an open gets another grace instead of being stopped")
    func busyGetsMoreGrace() throws {
        var m = machine()
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 41)
        _ = m.checkedIn(app: "a", now: 1)
        let b = launch(&m, "b", token: 101, pid: 42, at: 2)
        // a is still launching (no transaction finished), so it never went to the background.
        #expect(graceToken(b, for: "a") == nil)
        #expect(m.state(of: "a") == .launching)
    }

    @Test("no grace configured: background apps are never suspended")
    func suspensionOff() {
        var m = machine(grace: nil)
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let actions = launch(&m, "b", token: 101, pid: 42, at: 10)
        #expect(graceToken(actions, for: "a") == nil)
    }

    @Test("past the live limit, the least recently used suspended app is terminated, and only it")
    func evictLeastRecentlyUsed() throws {
        var m = machine(limit: 2)
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let ta = try #require(graceToken(launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        let tb = try #require(graceToken(launch(&m, "c", token: 102, pid: 43, at: 20), for: "b"))
        // Three alive, limit two, but nobody is suspended yet: nothing to evict.
        #expect(m.running.count == 3)
        // a suspends: now the least recently used suspended app goes.
        #expect(m.graceExpired(app: "a", token: ta, now: 30) == [.suspend(app: "a", pid: 41), .terminate(app: "a", pid: 41, reason: .evicted)])
        #expect(m.apps["a"]?.ending == .evicted)
        #expect(m.graceExpired(app: "b", token: tb, now: 31) == [.suspend(app: "b", pid: 42)], "a's eviction already made room")
        _ = m.exited(app: "a", status: .signaled(9), now: 32)
        #expect(m.state(of: "a") == .notRunning)
        // A fourth app launching pushes out b, the least recently used suspended one.
        let d = m.open(request(103), app: "d", now: 40)
        #expect(d.contains(.terminate(app: "b", pid: 42, reason: .evicted)))
        #expect(!d.contains { if case .terminate(let app, _, _) = $0 { return app == "c" } else { return false } }, "c is not suspended")
    }

    @Test("an app started by hand is in the background: it gets a grace too")
    func attachedGetsGrace() {
        var m = machine()
        let actions = m.attached(app: "h", pid: 7, now: 0)
        #expect(graceToken(actions, for: "h") != nil)
        #expect(m.state(of: "h") == .background)
    }
}
