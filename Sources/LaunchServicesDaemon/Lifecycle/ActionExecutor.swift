#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Turns the launch state machine's actions into I/O: spawning through the supervisor,
/// frames to apps and callers through the connection table, deadline and grace timers on
/// the loop, signals, and the outcome's log line. It decides nothing; what it learns while
/// acting (a spawn failed, a timer fired) goes back as `Feedback` for the machine to decide.
///
/// Never re-entrant: an action list is carried out whole before anything it produced goes
/// back to the machine. What acting learns waits in a queue drained after the list, oldest
/// first, so the machine never runs again while one of its lists is half done (which once
/// let a failed spawn's retry arm its launch timer before the failed launch's own arm,
/// later in the same list, replaced it). A connection's close goes through the same queue:
/// NIO reports a close at once, also one an action made (a caller disconnected for its
/// unread replies), and handling it in the middle of a list withdrew opens the rest of that
/// list was about to answer. Deadline timers are keyed by the phase token they guard, so no
/// timer can replace or cancel another's.
final class ActionExecutor {
    /// What acting produced, for `AppLifecycle` to hand to the machine.
    enum Feedback {
        case spawned(app: String, pid: Int32)
        case spawnFailed(app: String, reason: String)
        case deadlinePassed(app: String, token: LaunchToken)
        case graceExpired(app: String, token: LaunchToken)
        case quitStepExpired(app: String, token: LaunchToken)
    }

    let loop: EventLoop
    private let logger: Logger
    private let configuration: DaemonConfiguration
    private let supervisor: ProcessSupervisor
    let connections: ConnectionTable
    /// The registered bundles, to launch an app.
    private let registry: RegistryService
    /// Where each open's answer is written.
    private let records: OpenRecords
    /// Deadlines by the phase token they guard (one loop timer for all), and each app's
    /// tokens (to drop the deadlines of phases that are over, and every one of an app that exited).
    private let deadlines: DeadlineTimer
    private var deadlineTokens: [String: [LaunchToken]] = [:]
    /// What is left to do after the list being carried out: feedback for the machine, and
    /// any list that arrived meanwhile. At most one feedback per action carried out.
    private var pending = CircularBuffer<Pending>()
    private var carryingOut = false
    private var draining = false
    private var graceTasks: [String: Scheduled<Void>] = [:]
    private var quitTasks: [String: Scheduled<Void>] = [:]
    /// Apps whose running process was handed its welcome in a prelude at spawn: its hello
    /// is not answered with another.
    private var welcomedAtSpawn: Set<String> = []
    /// `lsctl quit` callers by app, answered when the machine says the quit ended.
    var quitWaiters: [String: [QuitWaiter]] = [:]
    /// Set by `AppLifecycle`, which owns this executor: where feedback goes (to the
    /// machine, then back here). Called only between action lists, never inside one.
    var feedback: (Feedback) -> Void = { _ in }
    /// Set by `AppLifecycle`: whether the machine still runs the phase `token` began for an
    /// app (its deadline still matters); timers of phases that are over are dropped early.
    var phaseIsRunning: (String, LaunchToken) -> Bool = { _, _ in true }

    init(loop: EventLoop, logger: Logger, configuration: DaemonConfiguration, supervisor: ProcessSupervisor, connections: ConnectionTable,
         registry: RegistryService, records: OpenRecords) {
        self.loop = loop
        self.logger = logger
        self.configuration = configuration
        self.supervisor = supervisor
        self.connections = connections
        self.registry = registry
        self.records = records
        deadlines = DeadlineTimer(loop: loop)
        deadlines.passed = { [unowned self] in deadlinePassed(app: $0, token: $1) }
    }

    private enum Pending {
        case feedback(Feedback)
        case actions([LaunchStateMachine.Action])
        /// Work of another room that must not run inside a list (`afterCurrentActions`).
        case work(() -> Void)
    }

    /// Carries out `actions`, then hands back, in order, what they produced (and what that
    /// produced, and so on). Called while a list is being carried out (an event that arrived
    /// inline, say a channel that closed as it was written to), the new list waits its turn.
    func perform(_ actions: [LaunchStateMachine.Action]) {
        guard !carryingOut else {
            pending.append(.actions(actions))
            return
        }
        carryOut(actions)
        drain()
    }

    /// Runs `work` now, or after the list being carried out (and what is queued before it):
    /// a connection's close, which NIO reports at once, also one an action made (a caller
    /// disconnected for its unread replies), is handled there.
    func afterCurrentActions(_ work: @escaping () -> Void) {
        pending.append(.work(work))
        drain()
    }

    /// Feedback goes to the machine once no list is being carried out: now, from a timer;
    /// after the list, from an action.
    private func report(_ feedback: Feedback) {
        pending.append(.feedback(feedback))
        drain()
    }

    /// Hands back what is pending, oldest first. Only the outermost call drains: a list the
    /// machine returns for one feedback is carried out at once (no list is in progress then)
    /// and its own feedback queues behind what is already waiting.
    private func drain() {
        guard !carryingOut, !draining else { return }
        draining = true
        defer { draining = false }
        while let next = pending.popFirst() {
            switch next {
            case .feedback(let result): feedback(result)
            case .actions(let actions): carryOut(actions)
            case .work(let work): work()
            }
        }
    }

    private func carryOut(_ actions: [LaunchStateMachine.Action]) {
        carryingOut = true
        defer { carryingOut = false }
        for action in actions {
            switch action {
            case .spawn(let app, let prelude):
                spawn(app, prelude: prelude)
            case .sendLaunchMethod(let app, let phase, let token, let request):
                // The phase's token is the frame's request id; the app's phaseResult carries it back.
                connections.send(Envelope(id: token.value, .launchMethod(phase, Delivery(request))), toApp: app)
            case .deliver(let app, let token, let request):
                connections.send(Envelope(id: token.value, .deliver(Delivery(request))), toApp: app)
            case .deliverAtCheckIn(let app, let token, let request):
                var delivery = Delivery(request)
                delivery.ofLaunch = true
                connections.send(Envelope(id: token.value, .deliver(delivery)), toApp: app)
            case .notify(let app, let notification):
                connections.send(Envelope(id: 0, .notify(notification)), toApp: app)
            case .armDeadline(let app, _, let token, let after):
                armDeadline(app: app, token: token, after: after)
            case .reply(let token, let outcome):
                // A caller that finished sending can go once its last answer is out.
                if let caller = records.answer(token, outcome), caller.finishedSending {
                    afterCurrentActions { [connections] in connections.closeIfDone(caller) }
                }
            case .terminate(let app, let pid, let reason):
                logger.warning("terminating \(app) (pid \(pid)): \(describe(reason))", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                supervisor.signal(app, SIGKILL)
            case .armGrace(let app, let token, let after):
                graceTasks[app]?.cancel()
                graceTasks[app] = loop.assumeIsolated().scheduleTask(in: TimeAmount(after)) { [self] in
                    graceTasks[app] = nil
                    report(.graceExpired(app: app, token: token))
                }
            case .suspend(let app, let pid):
                logger.info("suspending \(app) (pid \(pid)): in the background for \(configuration.background.suspendAfter.map { "\($0)" } ?? "?")", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                supervisor.signal(app, SIGSTOP)
            case .resume(let app, let pid):
                logger.info("resuming \(app) (pid \(pid))", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                supervisor.signal(app, SIGCONT)
            case .closeConnection(let app):
                logger.notice("quitting \(app): closing its connection (it runs willTerminate and exits)", metadata: ["bundle_id": "\(app)"])
                connections.detach(app)?.channel.close(promise: nil)
            case .askToExit(let app, let pid):
                logger.warning("\(app) (pid \(pid)) is still running after its connection closed; sending SIGTERM", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                supervisor.signal(app, SIGTERM)
            case .armQuitStep(let app, let token, let after):
                quitTasks[app]?.cancel()
                quitTasks[app] = loop.assumeIsolated().scheduleTask(in: TimeAmount(after)) { [self] in
                    quitTasks[app] = nil
                    report(.quitStepExpired(app: app, token: token))
                }
            case .quitEnded(let app, let step, let status):
                answerQuitWaiters(app, step: step, status: status)
            }
        }
    }

    /// Arms the deadline of the phase begun under `token`. The app's other timers stay,
    /// except those of phases the machine has finished (one per answered open would
    /// otherwise linger until it fires): the machine keeps one deadline per app running.
    private func armDeadline(app: String, token: LaunchToken, after: Duration) {
        // The app's list is changed where it is stored: copied out and written back, it
        // cost a second lookup by the app's id and a copy of the list, on every open.
        let deadlines = deadlines, phaseIsRunning = phaseIsRunning
        func replaceFinished(_ tokens: inout [LaunchToken]) {
            tokens.removeAll { old in
                guard old == token || !phaseIsRunning(app, old) else { return false }
                deadlines.cancel(old)
                return true
            }
            tokens.append(token)
        }
        replaceFinished(&deadlineTokens[app, default: []])
        deadlines.arm(token, app: app, after: after)
    }

    /// A phase's deadline passed (`DeadlineTimer`): the machine decides what it means.
    private func deadlinePassed(app: String, token: LaunchToken) {
        deadlineTokens[app]?.removeAll { $0 == token }
        if deadlineTokens[app]?.isEmpty == true { deadlineTokens[app] = nil }
        report(.deadlinePassed(app: app, token: token))
    }

    /// Whether `app`'s process found its welcome on its connection at spawn (a prelude).
    func welcomed(_ app: String) -> Bool { welcomedAtSpawn.contains(app) }

    /// Stops the timers of an app that exited.
    func forget(_ app: String) {
        welcomedAtSpawn.remove(app)
        for token in deadlineTokens.removeValue(forKey: app) ?? [] {
            deadlines.cancel(token)
        }
        graceTasks.removeValue(forKey: app)?.cancel()
        quitTasks.removeValue(forKey: app)?.cancel()
    }

    /// Stops every grace timer: at shutdown the machine answers what they guarded.
    func cancelGraceTimers() {
        for task in graceTasks.values { task.cancel() }
        graceTasks.removeAll()
    }

    private func describe(_ reason: LaunchStateMachine.TerminationReason) -> String {
        switch reason {
        case .missedDeadline(let phase):
            return "it did not finish \(phase.rawValue) within \(configuration.deadlines[phase])"
        case .evicted:
            return "more than \(configuration.background.maximumLiveApps) apps are alive and it is the least recently used suspended one"
        case .disconnected:
            return "its connection to launchservicesd closed, so it can no longer be driven"
        case .quit:
            return "it was asked to quit and ignored both its closed connection and SIGTERM"
        }
    }

    private func spawn(_ app: String, prelude: LaunchStateMachine.LaunchPrelude?) {
        guard let bundle = registry.registry.apps[app] else {
            report(.spawnFailed(app: app, reason: "it is no longer registered"))
            return
        }
        let process: any LaunchedProcess
        do {
            process = try supervisor.launch(bundle)
        } catch {
            logger.error("launch failed: \(error)", metadata: ["bundle_id": "\(app)", "phase": "launch", "outcome": "launchFailed"])
            report(.spawnFailed(app: app, reason: error.description))
            return
        }
        report(.spawned(app: app, pid: process.pid))
        logger.debug("spawned \(app) (pid \(process.pid))", metadata: ["bundle_id": "\(app)", "pid": "\(process.pid)"])
        if prelude != nil { welcomedAtSpawn.insert(app) } else { welcomedAtSpawn.remove(app) }
        // The prelude goes straight into the connection, before its channel has written
        // anything (or before NIO adopts it, without a prepared connection); the channel
        // writes what the socket did not take (an annotation near the frame limit goes
        // twice), first, as the app reads.
        var rest: [UInt8] = []
        var envelopes: [Envelope] = []
        if let prelude {
            envelopes = preludeEnvelopes(prelude, to: app)
            let bytes = envelopes.reduce(into: [UInt8]()) { $0 += Frame.encode($1) }
            let taken = process.prewrite(bytes)
            if taken > 0 {
                rest = Array(bytes[taken...])
                envelopes = []
            }
        }
        let table = NIOLoopBound(connections, eventLoop: loop)
        let connected = process.connect(on: loop) { channel in table.value.installPipeline(on: channel, kind: .app(app)) }
        connected.whenFailure { [logger] error in
            logger.error("could not adopt \(app)'s connection: \(error)", metadata: ["bundle_id": "\(app)"])
            process.signal(SIGKILL)
        }
        // Adopting a connected socket completes on the loop, within this call: what is left
        // of the prelude is the channel's first write, made while the app is still starting.
        if !rest.isEmpty || !envelopes.isEmpty {
            connected.assumeIsolated().whenSuccess { [self] _ in
                if !rest.isEmpty { connections.send(bytes: rest, toApp: app) }
                for envelope in envelopes { connections.send(envelope, toApp: app) }
                connections.flush()
            }
        }
    }

    /// The welcome and both launch methods, written before the app's hello. Nothing else is
    /// written to the app before its hello (then, to a runtime that drops a vetoed launch's
    /// delivery, `didBecomeActive` and that delivery), so the order on the connection is the
    /// protocol's.
    private func preludeEnvelopes(_ prelude: LaunchStateMachine.LaunchPrelude, to app: String) -> [Envelope] {
        let delivery = Delivery(prelude.request)
        return [
            Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: app)),
            Envelope(id: prelude.willFinishLaunching.value, .launchMethod(.willFinishLaunching, delivery)),
            Envelope(id: prelude.didFinishLaunching.value, .launchMethod(.didFinishLaunching, delivery)),
        ]
    }
}

extension Delivery {
    /// What an app is handed for an open request.
    init(_ request: OpenRequest) {
        self.init(url: request.url, sourceApplication: request.sourceApplication, annotation: request.annotation, warning: request.warning, background: request.background)
    }
}
