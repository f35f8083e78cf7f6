import LaunchServicesCore
import Testing

/// `LaunchStateMachine` driven directly: each event in, the exact list of actions out.
/// Times are given as `now:` values so every phase's duration in a reply can be checked.
/// This file holds the suite's helpers; each `LaunchStateMachine*Tests.swift` holds a topic.
@Suite("LaunchStateMachine: every transition, exact actions")
struct LaunchStateMachineEventTests {
    typealias Action = LaunchStateMachine.Action

    static let deadlines = PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(4), openURL: .seconds(3))
    static let second: UInt64 = 1_000_000_000

    func machine(prewrites: Bool = false) -> LaunchStateMachine { LaunchStateMachine(deadlines: Self.deadlines, prewritesLaunchMethods: prewrites) }

    /// Both ways a launch's launch methods reach the app: sent when each phase begins, or
    /// written at spawn (`prewritesLaunchMethods`).
    static let bothModes = [false, true]

    /// The actions expected in a mode, from those of a machine that sends each launch method
    /// when its phase begins: written at spawn, none is sent later; all else is the same.
    func inMode(_ prewrites: Bool, _ actions: [Action]) -> [Action] {
        guard prewrites else { return actions }
        return actions.filter { if case .sendLaunchMethod = $0 { false } else { true } }
    }

    func request(_ token: LaunchToken, _ url: String = "x:1") -> OpenRequest {
        OpenRequest(token: token, url: url, sourceApplication: "org.example.caller", annotation: .dictionary([("k", .integer(1))]))
    }

    func timing(_ phase: LaunchPhase, _ nanoseconds: UInt64) -> PhaseTiming {
        PhaseTiming(phase: phase, nanoseconds: nanoseconds)
    }

    /// The token of the last phase begun (launch method or delivery) among `actions`: the
    /// one sent, or, for a launch method written at spawn, the one its deadline was armed with.
    func sentToken(_ actions: [Action], sourceLocation: SourceLocation = #_sourceLocation) -> LaunchToken {
        for action in actions.reversed() {
            switch action {
            case .sendLaunchMethod(_, _, let token, _), .deliver(_, let token, _): return token
            case .armDeadline(_, let phase, let token, _) where phase == .willFinishLaunching || phase == .didFinishLaunching: return token
            default: continue
            }
        }
        Issue.record("no phase was sent in \(actions)", sourceLocation: sourceLocation)
        // The test has failed already; a token no phase of its machine has yet.
        return .last
    }

    /// The apps whose state is `.active`.
    func activeApps(_ m: LaunchStateMachine) -> [String] {
        m.running.filter { $0.record.state == .active }.map(\.app)
    }

    /// Drives a complete cold open of `app` (every launch method accepted, delivered with
    /// `open`), starting at `base`; returns every action produced after the open.
    @discardableResult
    func coldOpen(_ m: inout LaunchStateMachine, app: String, token: LaunchToken, pid: Int32, base: UInt64 = 0) -> [Action] {
        _ = m.open(request(token), app: app, now: base)
        m.spawned(app: app, pid: pid)
        var all: [Action] = []
        let willFinish = m.checkedIn(app: app, now: base + 10)
        all += willFinish
        let didFinish = m.phaseCompleted(app: app, token: sentToken(willFinish), accepted: true, now: base + 20)
        all += didFinish
        let deliver = m.phaseCompleted(app: app, token: sentToken(didFinish), accepted: true, now: base + 30)
        all += deliver
        all += m.phaseCompleted(app: app, token: sentToken(deliver), accepted: true, method: .open, now: base + 40)
        return all
    }
}
