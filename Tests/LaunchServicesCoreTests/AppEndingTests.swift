import LaunchServicesCore
import Testing

/// An app the machine is ending (evicted, or asked to quit) is in one stage of its end: what
/// each stage forbids (an open starting in a killed process, a second kill, a quit closing
/// the connection of a process already killed) and what it decides (how a quit ended).
extension BackgroundSuspensionTests {
    /// `a`, `b` and `c` launched in turn (limit two), `a` suspended and evicted for it.
    func evictedA() throws -> LaunchStateMachine {
        var m = machine(limit: 2)
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let ta = try #require(graceToken(launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        launch(&m, "c", token: 102, pid: 43, at: 20)
        #expect(m.graceExpired(app: "a", token: ta, now: 30) == [.suspend(app: "a", pid: 41), .terminate(app: "a", pid: 41, reason: .evicted)])
        return m
    }

    @Test("an open for an evicted app waits for the killed process to exit, then launches it cold")
    func openWaitsForEviction() throws {
        var m = try evictedA()
        #expect(m.open(request(200), app: "a", now: 31).isEmpty, "no resume or delivery to a process being killed")
        #expect(m.exited(app: "a", status: .signaled(9), now: 32).first == .spawn(app: "a"))
        #expect(m.state(of: "a") == .launching)
    }

    @Test("quitting an evicted app answers the open queued behind the eviction and does nothing more to it (it is killed already); the quit ends as killed")
    func quitOfEvicted() throws {
        var m = try evictedA()
        #expect(m.quitAnswer(for: "a") == .quits(pid: 41))
        #expect(m.open(request(200), app: "a", now: 31).isEmpty)
        #expect(m.quit(app: "a", grace: .seconds(2), now: 32) == [
            .reply(requestToken: 200, .failure(OpenError(.unavailable, "a was asked to quit before this open began"), app: "a")),
        ], "no resume, no connection to close, no step to arm")
        #expect(m.apps["a"]?.ending == .killed)
        #expect(m.quitAnswer(for: "a") == .alreadyQuitting(pid: 41))
        #expect(m.exited(app: "a", status: .signaled(9), now: 32) == [.quitEnded(app: "a", step: .killed, status: .signaled(9))])
    }

    @Test("the lost connection of an evicted app kills nothing a second time")
    func disconnectOfEvicted() throws {
        var m = try evictedA()
        #expect(m.disconnected(app: "a").isEmpty)
        #expect(m.exited(app: "a", status: .signaled(9), now: 32).isEmpty, "nobody asked it to quit")
    }

    @Test("a quit resumes a suspended app, which is then in the background, not suspended")
    func quitOfSuspended() throws {
        var m = machine()
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let ta = try #require(graceToken(launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        #expect(m.graceExpired(app: "a", token: ta, now: 20) == [.suspend(app: "a", pid: 41)])
        #expect(Array(m.quit(app: "a", grace: .seconds(2), now: 30).prefix(2)) == [.resume(app: "a", pid: 41), .closeConnection(app: "a")])
        #expect(m.state(of: "a") == .background)
    }

    @Test("an app its quit has killed no longer counts as alive: nothing else is evicted for it")
    func quitKilledIsNotAlive() throws {
        var m = machine(limit: 2)
        launch(&m, "a", token: 100, pid: 41, at: 0)
        let ta = try #require(graceToken(launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        guard case .armQuitStep(_, let closed, _)? = m.quit(app: "b", grace: .seconds(2), now: 20).last,
              case .armQuitStep(_, let asked, _)? = m.quitStepExpired(app: "b", token: closed, grace: .seconds(2)).last else {
            Issue.record("no quit steps armed")
            return
        }
        #expect(m.quitStepExpired(app: "b", token: asked, grace: .seconds(2)) == [.terminate(app: "b", pid: 42, reason: .quit)])
        #expect(m.open(request(102), app: "c", now: 30).first == .spawn(app: "c"))
        #expect(m.graceExpired(app: "a", token: ta, now: 40) == [.suspend(app: "a", pid: 41)], "a and c are alive, b is killed: within the limit")
    }

    @Test("a quit step's token is stale once the step is over, after the exit, and for the next process")
    func staleQuitTokens() throws {
        var m = machine()
        launch(&m, "a", token: 100, pid: 41, at: 0)
        #expect(m.quitStepExpired(app: "a", token: 1, grace: .seconds(2)).isEmpty, "not quitting: no step runs")
        guard case .armQuitStep(_, let closed, _)? = m.quit(app: "a", grace: .seconds(2), now: 10).last else {
            Issue.record("no quit step armed")
            return
        }
        _ = m.exited(app: "a", status: .exited(0), now: 11)
        #expect(m.quitStepExpired(app: "a", token: closed, grace: .seconds(2)).isEmpty, "exited")
        launch(&m, "a", token: 101, pid: 44, at: 20)
        #expect(m.quitStepExpired(app: "a", token: closed, grace: .seconds(2)).isEmpty, "another process")
        #expect(m.disconnected(app: "a") == [.terminate(app: "a", pid: 44, reason: .disconnected)], "the new process is not being quit")
    }
}
