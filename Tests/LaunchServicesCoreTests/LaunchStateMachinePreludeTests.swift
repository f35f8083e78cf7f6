import LaunchServicesCore
import Testing

/// `LaunchStateMachine`, exact actions. Launch methods written at spawn (`prewritesLaunchMethods`):
/// the tokens, what the spawn carries, when each phase's clock and deadline start.
extension LaunchStateMachineEventTests {
    @Test("written at spawn: tokens n..n+2 taken at the open, the prelude carries both methods; hello and the first answer arm deadlines and send nothing; four timings")
    func preludeAtSpawn() {
        var m = machine(prewrites: true)
        let r = request(100)
        #expect(m.open(r, app: "a", now: 0) == [
            .spawn(app: "a", prelude: LaunchStateMachine.LaunchPrelude(willFinishLaunching: 2, didFinishLaunching: 3, request: r)),
            .armDeadline(app: "a", phase: .launch, token: 1, after: .seconds(10)),
        ])
        m.spawned(app: "a", pid: 42)
        // The hello ends `launch`; willFinishLaunching is already on the connection: its
        // clock and deadline start now, under the token it was written with.
        #expect(m.checkedIn(app: "a", now: 100) == [.armDeadline(app: "a", phase: .willFinishLaunching, token: 2, after: .seconds(5))])
        #expect(m.apps["a"]?.currentPhase == .willFinishLaunching)
        #expect(m.apps["a"]?.currentPhaseToken == 2)
        #expect(m.phaseCompleted(app: "a", token: 2, accepted: true, now: 300) == [.armDeadline(app: "a", phase: .didFinishLaunching, token: 3, after: .seconds(4))])
        #expect(m.apps["a"]?.currentPhaseToken == 3)
        // The one crossing left: the front, then the delivery under the next token.
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 600) == [
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 4, request: r),
        ])
        #expect(m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 1_000) == [
            .reply(requestToken: 100, OpenOutcome(app: "a", launched: true, method: .open,
                                                  timings: [timing(.launch, 100), timing(.willFinishLaunching, 200), timing(.didFinishLaunching, 300), timing(.openURL, 400)],
                                                  launchState: .cold)),
        ])
    }

    @Test("written at spawn: an answer under the second method's token before the first's is not current and is ignored; the deadline then ends the app")
    func preludeAnswerOutOfOrder() {
        var m = machine(prewrites: true)
        _ = m.open(request(100), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 10)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 20).isEmpty)
        #expect(m.apps["a"]?.currentPhase == .willFinishLaunching)
        #expect(m.deadlinePassed(app: "a", token: 2, now: 10 + 5 * Self.second) == [
            .reply(requestToken: 100, .failure(
                OpenError(.timeout, phase: .willFinishLaunching, "a did not finish willFinishLaunching within 5 s; it was terminated"),
                app: "a", launched: true, timings: [timing(.launch, 10), timing(.willFinishLaunching, 5 * Self.second)], launchState: .cold)),
            .terminate(app: "a", pid: 42, reason: .missedDeadline(.willFinishLaunching)),
        ])
    }

    @Test("written at spawn or not, the ids on each connection are the same: xyz 2/3/4, todolist 6/7/9 with 8 for xyz's grace (PROTOCOL.md §10.1)",
          arguments: bothModes)
    func preludeTokensMatchTheProtocolExample(prewrites: Bool) {
        var m = machine(prewrites: prewrites)
        let xyz = coldOpen(&m, app: "xyz", token: 100, pid: 42)
        #expect(phaseTokens(xyz) == [2, 3, 4])
        let todolist = coldOpen(&m, app: "todolist", token: 101, pid: 43, base: 1_000)
        #expect(phaseTokens(todolist) == [6, 7, 9])
        #expect(todolist.contains(.armGrace(app: "xyz", token: 8, after: .seconds(30))))
    }

    /// The tokens of the phases begun for an app among `actions`, in order (launch methods
    /// by their deadlines, which are armed sent or not; deliveries as sent).
    private func phaseTokens(_ actions: [Action]) -> [LaunchToken] {
        actions.compactMap { action in
            switch action {
            case .armDeadline(_, let phase, let token, _) where phase == .willFinishLaunching || phase == .didFinishLaunching: token
            case .deliver(_, let token, _): token
            default: nil
            }
        }
    }
}
