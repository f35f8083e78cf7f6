import LaunchServicesCore
import Testing

/// `lsctl quit`: the machine ends an app step by step, exact actions.
extension LaunchStateMachineEventTests {
    @Test("quit: the connection closes first; still alive after the grace, SIGTERM; then SIGKILL with reason quit")
    func quitSteps() {
        var m = machine()
        _ = coldOpen(&m, app: "a", token: 100, pid: 42)
        let first = m.quit(app: "a", grace: .seconds(2), now: 1_000)
        guard case .armQuitStep(_, let token1, _)? = first.last else {
            Issue.record("no quit step armed: \(first)")
            return
        }
        #expect(first == [.closeConnection(app: "a"), .armQuitStep(app: "a", token: token1, after: .seconds(2))])
        #expect(m.apps["a"]?.ending?.quitStep == .closed)
        #expect(m.disconnected(app: "a").isEmpty, "the daemon closed it: no kill for a lost connection")
        #expect(m.quit(app: "a", grace: .seconds(2), now: 1_001).isEmpty, "a second quit changes nothing")
        let second = m.quitStepExpired(app: "a", token: token1, grace: .seconds(2))
        #expect(second == [.askToExit(app: "a", pid: 42), .armQuitStep(app: "a", token: token1.successor, after: .seconds(2))])
        #expect(m.quitStepExpired(app: "a", token: token1, grace: .seconds(2)).isEmpty, "a stale step does nothing")
        #expect(m.quitStepExpired(app: "a", token: token1.successor, grace: .seconds(2)) == [.terminate(app: "a", pid: 42, reason: .quit)])
        _ = m.exited(app: "a", status: .signaled(9), now: 5_000)
        #expect(m.state(of: "a") == .notRunning)
        #expect(m.apps["a"]?.ending == nil)
    }

    @Test("quit answers the opens waiting for the app, resumes a suspended one first, and an open during the quit waits and then launches cold")
    func quitAnswersAndQueues() throws {
        var m = machine()
        _ = coldOpen(&m, app: "a", token: 100, pid: 42)
        let toBack = coldOpen(&m, app: "b", token: 200, pid: 43, base: 100)
        let grace = try #require(toBack.compactMap { action -> LaunchToken? in
            if case .armGrace(let app, let token, _) = action, app == "a" { return token }
            return nil
        }.first)
        #expect(m.graceExpired(app: "a", token: grace, now: 40 * Self.second) == [.suspend(app: "a", pid: 42)])
        let quit = m.quit(app: "a", grace: .seconds(2), now: 41 * Self.second)
        #expect(quit.first == .resume(app: "a", pid: 42))
        #expect(quit.contains(.closeConnection(app: "a")))
        #expect(m.open(request(300), app: "a", now: 41 * Self.second + 1).isEmpty, "queued behind the quit")
        let exit = m.exited(app: "a", status: .exited(0), now: 42 * Self.second)
        #expect(exit.contains(.spawn(app: "a")), "the queued open launches a fresh copy")

        let busy = m.open(request(400), app: "b", now: 43 * Self.second)
        #expect(!busy.isEmpty)
        #expect(m.open(request(401), app: "b", now: 43 * Self.second).isEmpty)
        let quitB = m.quit(app: "b", grace: .seconds(2), now: 44 * Self.second)
        let answered = quitB.compactMap { action -> LaunchToken? in
            if case .reply(let token, let outcome) = action, outcome.error?.code == .unavailable { return token }
            return nil
        }
        #expect(Set(answered) == [400, 401], "the open in progress and the queued one are both answered")
    }

    @Test("the machine answers whether there is anything to quit: unknown, unspawned, running, already quitting, exited, stopping")
    func quitAnswers() {
        var m = machine()
        #expect(m.quitAnswer(for: "a") == .notRunning, "unknown")
        #expect(m.quit(app: "a", grace: .seconds(2), now: 0).isEmpty)
        _ = m.open(request(100), app: "a", now: 0)
        #expect(m.quitAnswer(for: "a") == .notRunning, "launching, no process yet")
        #expect(m.quit(app: "a", grace: .seconds(2), now: 1).isEmpty)
        m.spawned(app: "a", pid: 42)
        #expect(m.quitAnswer(for: "a") == .quits(pid: 42), "spawned: a launching app can be quit")
        #expect(m.quit(app: "a", grace: .seconds(2), now: 2).last == .armQuitStep(app: "a", token: 2, after: .seconds(2)))
        #expect(m.quitAnswer(for: "a") == .alreadyQuitting(pid: 42))
        #expect(m.quit(app: "a", grace: .seconds(2), now: 3).isEmpty)
        _ = m.exited(app: "a", status: .exited(0), now: 4)
        #expect(m.quitAnswer(for: "a") == .notRunning, "exited")

        coldOpen(&m, app: "b", token: 200, pid: 43, base: 10)
        _ = m.shutdown(now: 100)
        #expect(m.quitAnswer(for: "b") == .stopping)
        #expect(m.quit(app: "b", grace: .seconds(2), now: 101).isEmpty, "stopping: every app ends with the daemon")
        #expect(m.quitAnswer(for: "c") == .notRunning, "unknown while stopping")
    }

    @Test("the exit of an app being quit says how far the quit went, first: by itself, after SIGTERM, after SIGKILL")
    func quitEndedSteps() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.quit(app: "a", grace: .seconds(2), now: 1_000)
        #expect(m.exited(app: "a", status: .exited(0), now: 1_001) == [.quitEnded(app: "a", step: .closed, status: .exited(0))])

        coldOpen(&m, app: "a", token: 101, pid: 43, base: 2_000)
        guard case .armQuitStep(_, let closed, _)? = m.quit(app: "a", grace: .seconds(2), now: 3_000).last else {
            Issue.record("no quit step armed")
            return
        }
        _ = m.quitStepExpired(app: "a", token: closed, grace: .seconds(2))
        #expect(m.exited(app: "a", status: .signaled(15), now: 3_001) == [.quitEnded(app: "a", step: .asked, status: .signaled(15))])

        coldOpen(&m, app: "a", token: 102, pid: 44, base: 4_000)
        guard case .armQuitStep(_, let first, _)? = m.quit(app: "a", grace: .seconds(2), now: 5_000).last,
              case .armQuitStep(_, let second, _)? = m.quitStepExpired(app: "a", token: first, grace: .seconds(2)).last else {
            Issue.record("no quit steps armed")
            return
        }
        #expect(m.quitStepExpired(app: "a", token: second, grace: .seconds(2)) == [.terminate(app: "a", pid: 44, reason: .quit)])
        #expect(m.exited(app: "a", status: .signaled(9), now: 5_001) == [.quitEnded(app: "a", step: .killed, status: .signaled(9))])
        #expect(m.exited(app: "a", status: .signaled(9), now: 5_002).isEmpty, "no second answer")
    }

    @Test("an open queued during a quit starts after the quit is answered, in the same list")
    func quitEndedThenQueuedOpen() {
        var m = machine()
        coldOpen(&m, app: "a", token: 100, pid: 42)
        _ = m.quit(app: "a", grace: .seconds(2), now: 1_000)
        #expect(m.open(request(101), app: "a", now: 1_001).isEmpty)
        #expect(m.exited(app: "a", status: .exited(0), now: 1_002) == [
            .quitEnded(app: "a", step: .closed, status: .exited(0)),
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 6, after: .seconds(10)),
        ])
    }
}
