import LaunchServicesCore
import Testing

/// What LaunchStateMachineTests.swift does not cover: a signal kill in every phase, and
/// how an exit status reads. Every other transition is checked there, action by action.
@Suite("Launch state machine")
struct StateMachineTransitionTests {
    let deadlines = PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(4), openURL: .seconds(3))
    typealias A = LaunchStateMachine.Action

    func request(_ token: LaunchToken, _ url: String = "a:1") -> OpenRequest {
        OpenRequest(token: token, url: url, sourceApplication: "src", annotation: .string("note"))
    }

    /// The single reply among `actions`.
    func reply(_ actions: [A]) -> (token: LaunchToken, outcome: OpenOutcome)? {
        for case .reply(let token, let outcome) in actions { return (token, outcome) }
        return nil
    }

    /// The token of the last phase sent in `actions`.
    func lastToken(_ actions: [A]) -> LaunchToken? {
        for action in actions.reversed() {
            switch action {
            case .sendLaunchMethod(_, _, let token, _), .deliver(_, let token, _): return token
            default: continue
            }
        }
        return nil
    }

    @Test("a crash in each phase: crashed naming the phase and how it ended; state cleaned up", arguments: LaunchPhase.allCases)
    func crash(phase: LaunchPhase) throws {
        var m = LaunchStateMachine(deadlines: deadlines)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        var token: LaunchToken?
        if phase != .launch { token = lastToken(m.checkedIn(app: "a", now: 1)) }
        if phase == .didFinishLaunching || phase == .openURL { token = lastToken(m.phaseCompleted(app: "a", token: try #require(token), accepted: true, now: 2)) }
        if phase == .openURL { _ = m.phaseCompleted(app: "a", token: try #require(token), accepted: true, now: 3) }
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
}
