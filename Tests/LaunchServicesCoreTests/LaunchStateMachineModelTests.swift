import LaunchServicesCore
import Testing

/// `LaunchStateMachine` in a randomized world: a model of the daemon and its apps carries out
/// every action the machine returns, and, in an order a seeded generator picks, feeds back
/// what the world would do in reply (a spawn's outcome, a hello, the app's answers, timers
/// that fire, exits), mixed with what users and apps do on their own (opens, crashes, closed
/// connections, callers that leave, quits), then stops the machine and lets every timer and
/// exit run out. The transition tests pin each event's exact actions; this checks what must
/// hold across any interleaving:
///
/// - no second process is started for an app while its first still runs;
/// - no caller is answered twice, and none but callers that asked;
/// - every caller that stayed is answered exactly once, by the end;
/// - after the stop, once every exit has come back, no app is left running;
/// - a launch's delivery written at check-in is never waited for once a launch method said NO
///   (the runtime drops it).
@Suite("LaunchStateMachine: randomized event sequences against a model of the daemon")
struct LaunchStateMachineModelTests {
    typealias Action = LaunchStateMachine.Action

    /// What the world may do next, because of an action the machine took.
    enum Pending: Equatable {
        case hello(app: String, pid: Int32)
        case answer(app: String, pid: Int32, token: LaunchToken, delivery: Bool)
        case deadline(app: String, token: LaunchToken)
        case grace(app: String, token: LaunchToken)
        case quitStep(app: String, token: LaunchToken)
        case exit(app: String, pid: Int32)
    }

    /// The daemon and its apps, as far as the machine can tell.
    struct World {
        var machine: LaunchStateMachine
        var random: SeededGenerator
        var now: UInt64 = 1_000_000
        var nextPID: Int32 = 100
        var nextRequest: UInt32 = 1_000_000
        /// The process each app runs, from its spawn until its exit is reported.
        var live: [String: Int32] = [:]
        /// The prelude a running process was spawned with: it answers both launch methods
        /// after its hello, in order, without being sent them.
        var preludes: [Int32: LaunchStateMachine.LaunchPrelude] = [:]
        /// The apps' runtime drops the launch's delivery after a NO (its hello says so): the
        /// machine then writes the delivery at the hello (`deliverAtCheckIn`).
        var dropsVetoedDelivery = false
        /// The launch's delivery written at a process's hello, answered after its second
        /// launch method unless one of the two said NO.
        var deliveriesAtCheckIn: [Int32: LaunchToken] = [:]
        var vetoedLaunches: Set<Int32> = []
        var pending: [Pending] = []
        var issued: Set<LaunchToken> = []
        var withdrawn: Set<LaunchToken> = []
        var replies: [LaunchToken: Int] = [:]
        var problems: [String] = []
        var steps = 0
        /// The machine was stopped: what is left runs out.
        var stopped = false
        /// The latest events and actions (at most 400), printed when a check fails.
        var log: [String] = [] {
            didSet { if log.count > 400 { log.removeFirst(200) } }
        }

        mutating func tick() -> UInt64 {
            now += UInt64.random(in: 1_000...50_000_000, using: &random)
            return now
        }

        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

        /// Carries out the machine's actions the way the daemon's executor does: I/O is
        /// only noted here, and what it leads to becomes pending.
        mutating func carryOut(_ actions: [Action]) {
            // The executor spawns as it meets the action and hands the outcome back once the
            // whole list is carried out, before anything else can happen.
            var spawns: [(app: String, prelude: LaunchStateMachine.LaunchPrelude?)] = []
            defer { for spawn in spawns { spawnOutcome(app: spawn.app, prelude: spawn.prelude) } }
            for action in actions {
                log.append("  \(steps) -> \(action)".prefix(160).description)
                switch action {
                case .spawn(let app, let prelude):
                    if let pid = live[app] { problems.append("step \(steps): a second spawn of \(app) while pid \(pid) runs") }
                    spawns.append((app, prelude))
                case .sendLaunchMethod(let app, _, let token, _):
                    if let pid = live[app] { pending.append(.answer(app: app, pid: pid, token: token, delivery: false)) }
                case .deliver(let app, let token, _):
                    if let pid = live[app] { pending.append(.answer(app: app, pid: pid, token: token, delivery: true)) }
                case .deliverAtCheckIn(let app, let token, _):
                    if !dropsVetoedDelivery { problems.append("step \(steps): a delivery at check-in to \(app), whose runtime did not say it drops a vetoed one") }
                    if let pid = live[app] {
                        if preludes[pid] == nil { problems.append("step \(steps): a delivery at check-in to \(app), launched without its launch methods written") }
                        deliveriesAtCheckIn[pid] = token
                    }
                case .armDeadline(let app, let phase, let token, _):
                    // The runtime drops a vetoed launch's delivery written at check-in: the
                    // machine must never wait for its answer.
                    if phase == .openURL, let pid = live[app], deliveriesAtCheckIn[pid] == token, vetoedLaunches.contains(pid) {
                        problems.append("step \(steps): \(app) waits for the answer to its vetoed launch's delivery \(token), which the runtime dropped")
                    }
                    pending.append(.deadline(app: app, token: token))
                case .reply(let token, _):
                    if !issued.contains(token) { problems.append("step \(steps): a reply to \(token), which no caller asked under") }
                    replies[token, default: 0] += 1
                    if replies[token]! > 1 { problems.append("step \(steps): caller \(token) answered twice") }
                case .terminate(let app, let pid, _), .askToExit(let app, let pid):
                    if live[app] == pid, !pending.contains(.exit(app: app, pid: pid)) { pending.append(.exit(app: app, pid: pid)) }
                case .closeConnection(let app):
                    // The runtime calls willTerminate and exits, mostly; a stubborn app
                    // waits for the quit's next step.
                    if let pid = live[app], chance(0.7), !pending.contains(.exit(app: app, pid: pid)) { pending.append(.exit(app: app, pid: pid)) }
                case .armGrace(let app, let token, _):
                    pending.append(.grace(app: app, token: token))
                case .armQuitStep(let app, let token, _):
                    pending.append(.quitStep(app: app, token: token))
                case .notify, .suspend, .resume, .quitEnded:
                    break
                }
            }
        }

        /// A spawn's outcome: mostly a process, which says hello later; sometimes a failure.
        mutating func spawnOutcome(app: String, prelude: LaunchStateMachine.LaunchPrelude?) {
            if chance(0.92) {
                let pid = nextPID
                nextPID += 1
                live[app] = pid
                if let prelude { preludes[pid] = prelude }
                carryOut(machine.spawned(app: app, pid: pid))
                pending.append(.hello(app: app, pid: pid))
            } else {
                carryOut(machine.spawnFailed(app: app, reason: "model: no such file", now: now))
            }
        }

        /// Lets one pending consequence happen.
        mutating func settleOne(at index: Int) {
            let next = pending.remove(at: index)
            log.append("\(steps) settle \(next)".prefix(160).description)
            let now = tick()
            switch next {
            case .hello(let app, let pid):
                guard live[app] == pid else { return }
                carryOut(machine.checkedIn(app: app, now: now, dropsVetoedDelivery: dropsVetoedDelivery))
                if let prelude = preludes[pid] {
                    pending.append(.answer(app: app, pid: pid, token: prelude.willFinishLaunching, delivery: false))
                }
            case .answer(let app, let pid, let token, let delivery):
                guard live[app] == pid else { return }
                let accepted = chance(0.85)
                if !delivery && !accepted { vetoedLaunches.insert(pid) }
                carryOut(machine.phaseCompleted(app: app, token: token, accepted: accepted, method: delivery ? .open : nil, now: now))
                if let prelude = preludes[pid], token == prelude.willFinishLaunching {
                    pending.append(.answer(app: app, pid: pid, token: prelude.didFinishLaunching, delivery: false))
                }
                // The runtime runs the launch's delivery after its second launch method, unless
                // either said NO; then it drops it, unanswered.
                if let prelude = preludes[pid], token == prelude.didFinishLaunching, let written = deliveriesAtCheckIn[pid], !vetoedLaunches.contains(pid) {
                    pending.append(.answer(app: app, pid: pid, token: written, delivery: true))
                }
            case .deadline(let app, let token):
                // Most phases end well before their deadline: most picks leave it armed.
                guard stopped || chance(0.15) else { return pending.append(next) }
                carryOut(machine.deadlinePassed(app: app, token: token, now: now))
            case .grace(let app, let token):
                carryOut(machine.graceExpired(app: app, token: token, now: now))
            case .quitStep(let app, let token):
                carryOut(machine.quitStepExpired(app: app, token: token, grace: .seconds(1)))
            case .exit(let app, let pid):
                guard live[app] == pid else { return }
                live[app] = nil
                preludes[pid] = nil
                deliveriesAtCheckIn[pid] = nil
                vetoedLaunches.remove(pid)
                carryOut(machine.exited(app: app, status: chance(0.5) ? .exited(0) : .signaled(9), now: now))
            }
        }

        /// Something a user or an app does on its own.
        mutating func actOnItsOwn(apps: [String]) {
            let now = tick()
            let app = apps.randomElement(using: &random)!
            log.append("\(steps) own \(app)")
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                let token = LaunchToken(requestID: nextRequest)!
                nextRequest += 1
                issued.insert(token)
                let request = OpenRequest(token: token, url: "model:\(token)", sourceApplication: "org.example.caller", background: chance(0.1))
                carryOut(machine.open(request, app: app, now: now))
            case 55..<65:
                // A crash: the exit arrives without the machine having asked for it.
                if let pid = live[app], !pending.contains(.exit(app: app, pid: pid)) { pending.append(.exit(app: app, pid: pid)) }
            case 65..<73:
                if live[app] != nil { carryOut(machine.disconnected(app: app)) }
            case 73..<88:
                // A caller leaves: its opens are withdrawn, as when its connection closes.
                let waiting = issued.subtracting(withdrawn).filter { replies[$0] == nil }
                guard let gone = waiting.randomElement(using: &random) else { return }
                withdrawn.insert(gone)
                carryOut(machine.withdraw([gone]))
            default:
                carryOut(machine.quit(app: app, grace: .seconds(1), now: now))
            }
        }
    }

    static let seeds: [UInt64] = Array(1...120)

    @Test("any interleaving: one process per app, every caller answered once, nothing running after the stop", arguments: seeds)
    func randomized(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let prewrites = Bool.random(using: &random)
        let dropsVetoedDelivery = Bool.random(using: &random)
        let inFlight = [1, 1, 4, 16].randomElement(using: &random)!
        let liveLimit = [1, 2, 16].randomElement(using: &random)!
        var world = World(
            machine: LaunchStateMachine(
                deadlines: PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(4), openURL: .seconds(3)),
                background: BackgroundPolicy(suspendAfter: .seconds(30), maximumLiveApps: liveLimit),
                maximumOpensInFlight: inFlight, prewritesLaunchMethods: prewrites),
            random: random)
        world.dropsVetoedDelivery = dropsVetoedDelivery
        let apps = ["org.example.a", "org.example.b", "org.example.c"]
        let context = "seed \(seed) (prewrites \(prewrites), deliveries at check-in \(prewrites && dropsVetoedDelivery), opens in flight \(inFlight), live apps \(liveLimit))"

        for _ in 0..<400 {
            world.steps += 1
            if !world.pending.isEmpty, world.chance(0.7) {
                world.settleOne(at: Int.random(in: 0..<world.pending.count, using: &world.random))
            } else {
                world.actOnItsOwn(apps: apps)
            }
        }
        world.stopped = true
        world.carryOut(world.machine.shutdown(now: world.tick()))
        // Every timer and exit runs out; at the stop, the daemon closes every app's connection.
        for app in apps where world.live[app] != nil { world.carryOut(world.machine.disconnected(app: app)) }
        var settled = 0
        while !world.pending.isEmpty, settled < 20_000 {
            world.steps += 1
            settled += 1
            world.settleOne(at: Int.random(in: 0..<world.pending.count, using: &world.random))
            // A process the stop left alive is killed after the shutdown grace.
            if world.pending.isEmpty {
                for (app, pid) in world.live { world.pending.append(.exit(app: app, pid: pid)) }
            }
        }

        let unanswered = world.issued.subtracting(world.withdrawn).filter { world.replies[$0] == nil }
        if !world.problems.isEmpty || !unanswered.isEmpty {
            // What led there, to replay the seed by.
            print("\(context), the last events:\n" + world.log.suffix(40).joined(separator: "\n"))
        }
        #expect(world.pending.isEmpty, "\(context): the world did not settle")
        #expect(world.problems.isEmpty, "\(context): \(world.problems.prefix(5))")
        #expect(unanswered.isEmpty, "\(context): \(unanswered.count) callers that stayed were never answered, e.g. \(unanswered.sorted().prefix(3))")
        for app in apps {
            #expect(world.machine.state(of: app) == .notRunning, "\(context): \(app) is \(world.machine.state(of: app)) after the stop and every exit")
        }
        #expect(world.issued.count > 30, "\(context): the run made too few opens to mean anything (\(world.issued.count))")
    }
}
