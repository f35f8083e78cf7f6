@testable import LaunchServicesCore
import Testing

/// The machine's tokens (phases, grace timers, quit steps) come from one counter that wraps
/// within 1...UInt32.max, since they travel as 32-bit request ids and 0 means "none".
extension LaunchStateMachineEventTests {
    @Test("tokens wrap from UInt32.max to 1, never 0, across phases, grace timers and quit steps")
    func tokenWrap() {
        var m = LaunchStateMachine(deadlines: Self.deadlines, background: BackgroundPolicy(suspendAfter: .seconds(30)))
        m.nextToken = UInt64(UInt32.max)
        let r = request(100)
        #expect(m.open(r, app: "a", now: 0) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: UInt64(UInt32.max), after: .seconds(10)),
        ])
        m.spawned(app: "a", pid: 42)
        #expect(m.checkedIn(app: "a", now: 10) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 1, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 1, options: r),
        ])
        m.nextToken = UInt64(UInt32.max)
        #expect(m.quit(app: "a", grace: .seconds(2), now: 20).last == .armQuitStep(app: "a", token: UInt64(UInt32.max), after: .seconds(2)))
        #expect(m.quitStepExpired(app: "a", token: UInt64(UInt32.max), grace: .seconds(2)) == [
            .askToExit(app: "a", pid: 42), .armQuitStep(app: "a", token: 1, after: .seconds(2)),
        ])
    }

    @Test("a grace timer takes its token from the same counter, wrapping like the others")
    func graceTokenWrap() {
        var m = LaunchStateMachine(deadlines: Self.deadlines, background: BackgroundPolicy(suspendAfter: .seconds(30)))
        m.nextToken = UInt64(UInt32.max) - 1
        #expect(m.attached(app: "a", pid: 42, now: 0) == [.armGrace(app: "a", token: UInt64(UInt32.max) - 1, after: .seconds(30))])
        #expect(m.attached(app: "b", pid: 43, now: 1) == [.armGrace(app: "b", token: UInt64(UInt32.max), after: .seconds(30))])
        #expect(m.attached(app: "c", pid: 44, now: 2) == [.armGrace(app: "c", token: 1, after: .seconds(30))])
    }
}
