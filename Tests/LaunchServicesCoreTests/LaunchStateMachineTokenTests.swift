@testable import LaunchServicesCore
import Testing

/// The machine's tokens (phases, grace timers, quit steps) come from one counter that wraps
/// within 1...UInt32.max, since they travel as 32-bit request ids and 0 means "none".
extension LaunchStateMachineEventTests {
    @Test("tokens wrap from UInt32.max to 1, never 0, across phases, grace timers and quit steps")
    func tokenWrap() {
        var m = LaunchStateMachine(deadlines: Self.deadlines, background: BackgroundPolicy(suspendAfter: .seconds(30)))
        m.tokens = LaunchToken.Counter(next: .last)
        let r = request(100)
        #expect(m.open(r, app: "a", now: 0) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: .last, after: .seconds(10)),
        ])
        m.spawned(app: "a", pid: 42)
        #expect(m.checkedIn(app: "a", now: 10) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 1, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 1, options: r),
        ])
        m.tokens = LaunchToken.Counter(next: .last)
        #expect(m.quit(app: "a", grace: .seconds(2), now: 20).last == .armQuitStep(app: "a", token: .last, after: .seconds(2)))
        #expect(m.quitStepExpired(app: "a", token: .last, grace: .seconds(2)) == [
            .askToExit(app: "a", pid: 42), .armQuitStep(app: "a", token: 1, after: .seconds(2)),
        ])
    }

    @Test("a grace timer takes its token from the same counter, wrapping like the others")
    func graceTokenWrap() {
        var m = LaunchStateMachine(deadlines: Self.deadlines, background: BackgroundPolicy(suspendAfter: .seconds(30)))
        m.tokens = LaunchToken.Counter(next: LaunchToken(requestID: UInt32.max - 1)!)
        #expect(m.attached(app: "a", pid: 42, now: 0) == [.armGrace(app: "a", token: LaunchToken(requestID: UInt32.max - 1)!, after: .seconds(30))])
        #expect(m.attached(app: "b", pid: 43, now: 1) == [.armGrace(app: "b", token: .last, after: .seconds(30))])
        #expect(m.attached(app: "c", pid: 44, now: 2) == [.armGrace(app: "c", token: 1, after: .seconds(30))])
    }

    @Test("a token is a request id: 1...UInt32.max, and id 0 names no token")
    func tokenIsRequestID() {
        #expect(LaunchToken(requestID: 0) == nil)
        #expect(LaunchToken(requestID: 1) == .first)
        #expect(LaunchToken(requestID: UInt32.max) == .last)
        #expect(LaunchToken.last.value == UInt32.max)
        #expect(LaunchToken.last.successor == .first, "wraps to 1, skipping 0")
        #expect(LaunchToken(requestID: 41)?.successor == 42)
        var counter = LaunchToken.Counter(next: LaunchToken(requestID: UInt32.max - 1)!)
        #expect([counter.take(), counter.take(), counter.take()] == [LaunchToken(requestID: UInt32.max - 1)!, .last, .first])
        #expect(counter.next == 2)
    }

    @Test("a phase answered under id 0 or an id never issued changes nothing")
    func unknownPhaseTokens() {
        var m = machine()
        let r = request(100)
        _ = m.open(r, app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        let sent = sentToken(m.checkedIn(app: "a", now: 10))
        #expect(m.phaseCompleted(app: "a", token: sent.successor, accepted: true, now: 20).isEmpty, "never issued")
        #expect(m.deadlinePassed(app: "a", token: sent.successor, now: 20).isEmpty)
        #expect(m.isRunning(app: "a", phaseToken: sent))
        #expect(!m.isRunning(app: "a", phaseToken: sent.successor))
    }
}
