import LaunchServicesCore
import Testing

/// The daemon stopping, as the state machine decides it: exact actions out.
@Suite("Shutdown: the machine's decisions")
struct ShutdownTransitionTests {
    typealias A = LaunchStateMachine.Action
    let helper = BackgroundSuspensionTests()

    func request(_ token: LaunchToken, caller: UInt64 = 0) -> OpenRequest {
        OpenRequest(token: token, url: "x:\(token)", sourceApplication: "src", caller: caller)
    }

    @Test("every waiting caller is answered unavailable naming its app; suspended apps are resumed")
    func shutdownAnswersAndResumes() throws {
        var m = helper.machine()
        helper.launch(&m, "a", token: 100, pid: 41, at: 0)
        let grace = try #require(helper.graceToken(helper.launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        #expect(m.graceExpired(app: "a", token: grace, now: 20) == [.suspend(app: "a", pid: 41)])
        // b is busy with an open, and another waits behind it.
        _ = m.open(request(102), app: "b", now: 30)
        #expect(m.open(request(103), app: "b", now: 31).isEmpty)
        let unavailable = { (app: String) in OpenError(.unavailable, "launchservicesd is shutting down; the open in \(app) was not completed") }
        #expect(m.shutdown(now: 40) == [
            .reply(requestToken: 102, .failure(unavailable("b"), app: "b")),
            .reply(requestToken: 103, .failure(unavailable("b"), app: "b")),
            .resume(app: "a", pid: 41),
        ])
        #expect(m.stopping)
        #expect(m.waitingRequests.isEmpty)
        #expect(m.state(of: "a") == .background, "resumed so it can exit")
        #expect(m.shutdown(now: 41).isEmpty, "once")
    }

    @Test("while stopping: an open is refused at once, a closed connection kills nothing, a grace timer suspends nothing, a late answer is ignored")
    func whileStopping() throws {
        var m = helper.machine()
        helper.launch(&m, "a", token: 100, pid: 41, at: 0)
        let grace = try #require(helper.graceToken(helper.launch(&m, "b", token: 101, pid: 42, at: 10), for: "a"))
        let inFlight = m.open(request(102), app: "b", now: 20)
        _ = m.shutdown(now: 30)
        #expect(m.open(request(200), app: "a", now: 31) == [
            .reply(requestToken: 200, .failure(OpenError(.unavailable, "launchservicesd is shutting down"), app: "a")),
        ])
        #expect(m.disconnected(app: "a").isEmpty)
        #expect(m.graceExpired(app: "a", token: grace, now: 32).isEmpty)
        let token = try #require(inFlight.compactMap { action -> LaunchToken? in
            if case .deliver(_, let token, _) = action { return token }
            return nil
        }.first)
        #expect(m.phaseCompleted(app: "b", token: token, accepted: true, method: .open, now: 33).isEmpty, "already answered")
        #expect(m.exited(app: "b", status: .exited(0), now: 34).isEmpty)
        #expect(m.exited(app: "a", status: .exited(0), now: 35).isEmpty)
        #expect(m.running.isEmpty)
    }
}
