import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The apps' lifecycle room: the launch state machine, which decides every app's fate, and
/// the executor that carries its actions out. Every event reaches the machine here, and
/// what the machine returns is carried out at once; what acting learns comes back through
/// the executor's queue (`handle`), after the list that produced it. Confined to the loop.
final class AppLifecycle {
    private(set) var machine: LaunchStateMachine
    let executor: ActionExecutor
    private let loop: EventLoop
    private let logger: Logger
    private let configuration: DaemonConfiguration
    private let connections: ConnectionTable
    private let registry: RegistryService
    /// Reports each app whose lifecycle state or pid changed to the session bus's
    /// `AppStateChanged`, while a bus can hear it; nil without a session bus service.
    var stateReporter: AppStateReporter?

    init(configuration: DaemonConfiguration, loop: EventLoop, logger: Logger, connections: ConnectionTable, supervisor: ProcessSupervisor,
         registry: RegistryService, records: OpenRecords) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.connections = connections
        self.registry = registry
        machine = LaunchStateMachine(deadlines: configuration.deadlines, background: configuration.background,
                                     maximumOpensInFlight: configuration.maximumOpensInFlightPerApp,
                                     prewritesLaunchMethods: configuration.prewriteLaunchMethods)
        executor = ActionExecutor(loop: loop, logger: logger, configuration: configuration, supervisor: supervisor, connections: connections,
                                  registry: registry, records: records)
        executor.feedback = { [unowned self] in handle($0) }
        executor.phaseIsRunning = { [unowned self] in machine.isRunning(app: $0, phaseToken: $1) }
    }

    /// Monotonic nanoseconds, from the loop's clock (an embedded loop's in tests).
    var now: UInt64 { loop.now.uptimeNanoseconds }

    /// Hands an event to the machine and carries out what it returns; `flush` writes the
    /// frames out at once (for events that do not come from a read, whose batch flushes).
    func event(flush: Bool = false, _ event: (inout LaunchStateMachine, _ now: UInt64) -> [LaunchStateMachine.Action]) {
        let reporting = stateReporter?.beforeEvent(machine) ?? false
        executor.perform(event(&machine, now))
        if flush { connections.flush() }
        if reporting { stateReporter?.afterEvent(machine) }
    }

    /// Whether `app`'s process was handed its welcome at spawn, with its launch methods: its
    /// hello then gets no second one.
    func welcomedAtSpawn(_ app: String) -> Bool { executor.welcomed(app) }

    /// Runs `work` once the action list being carried out is done (now, if none is).
    func afterCurrentActions(_ work: @escaping () -> Void) {
        executor.afterCurrentActions(work)
    }

    /// Apps whose exit waits for what they wrote before it to be read (`processExited`).
    private(set) var exitsDraining: Set<String> = []

    /// How long an exit waits for the app's connection to end: the app's end closed with
    /// it, so only a child that inherited the socket keeps it open past a few reads.
    static let exitDrainWait: TimeAmount = .milliseconds(100)

    /// A process the daemon supervises exited: its timers and connection go, and the machine
    /// hears of it, once what the app wrote before it died has been read. The exit can be
    /// seen first: with its launch methods written at spawn an app runs ahead of the daemon,
    /// and its hello and answers may still be in the socket when it crashes in the next
    /// phase; read after the exit, they would be dropped and the crash named in a phase the
    /// app had already passed. So the exit waits for the connection to end (EOF, after its
    /// last frames), at most `exitDrainWait`.
    func processExited(_ process: any SupervisedProcess, status: ExitStatus) {
        let app = process.bundleID
        guard let connection = connections.app(app), connection.channel.isActive, exitsDraining.insert(app).inserted else {
            return finishExit(process, status: status)
        }
        var finished = false
        let finish = { [unowned self] in
            guard !finished else { return }
            finished = true
            exitsDraining.remove(app)
            finishExit(process, status: status)
        }
        let deadline = loop.assumeIsolated().scheduleTask(in: Self.exitDrainWait) { finish() }
        connection.channel.closeFuture.assumeIsolated().whenComplete { _ in
            deadline.cancel()
            finish()
        }
    }

    private func finishExit(_ process: any SupervisedProcess, status: ExitStatus) {
        let app = process.bundleID
        executor.forget(app)
        if let connection = connections.detach(app) { connection.channel.close(promise: nil) }
        logger.info("\(app) \(status)", metadata: ["bundle_id": "\(app)", "pid": "\(process.pid)"])
        event(flush: true) { $0.exited(app: app, status: status, now: $1) }
    }

    /// `lsctl quit ID`: the machine answers whether there is anything to quit and ends the
    /// app step by step; the caller is answered when the machine says the quit ended
    /// (`quitEnded`). The refusal, or nil when the caller waits for that answer.
    func quit(_ app: String, id: UInt32, from connection: ClientConnection) -> Message? {
        let pid: Int32
        switch machine.quitAnswer(for: app) {
        case .notRunning where registry.registry.apps[app] == nil && app.hasSuffix(".desktop"):
            return .failure(OpenError(.invalidRequest, "\(TerminalText.escapingControls(app)) is a desktop app: launchservicesd starts desktop apps as the user's own processes and does not quit them; close it as you would any other app"))
        case .notRunning where registry.registry.apps[app] == nil:
            return .failure(OpenError(.invalidRequest, "no app with bundle id '\(app)' is registered; see lsctl apps"))
        case .notRunning:
            return .failure(OpenError(.invalidRequest, "\(app) is not running; see lsctl running"))
        case .stopping:
            return .failure(OpenError(.unavailable, "launchservicesd is shutting down; \(app) ends with it"))
        case .quits(let running), .alreadyQuitting(let running):
            pid = running
        }
        let limit = configuration.connectionLimits.maximumPendingRequests
        guard executor.quitWaiters[app, default: []].count < limit else {
            return .failure(OpenError(.unavailable, "\(limit) callers already wait for \(app) to quit, the limit (connections.maximumPendingRequests); wait for their answers"))
        }
        executor.quitWaiters[app, default: []].append(QuitWaiter(connection: connection, id: id, pid: pid, started: now))
        event(flush: true) { [grace = configuration.shutdownGrace] in $0.quit(app: app, grace: grace, now: $1) }
        return nil
    }

    /// Quits `app` if it runs (it was unregistered); its pid when it does.
    func quitIfRunning(_ app: String) -> Int32? {
        guard case .quits(let pid) = machine.quitAnswer(for: app) else { return nil }
        event(flush: true) { [grace = configuration.shutdownGrace] in $0.quit(app: app, grace: grace, now: $1) }
        return pid
    }

    /// The stop: grace timers go (the machine answers what they guarded), every waiting
    /// caller is answered and suspended apps resume (they must run to notice their
    /// connection closing and exit).
    func shutdown() {
        executor.cancelGraceTimers()
        event(flush: true) { $0.shutdown(now: $1) }
    }

    /// What the executor learned while acting, handed to the machine. Whatever it sends is
    /// flushed here, since the event that started the list may have flushed already.
    private func handle(_ feedback: ActionExecutor.Feedback) {
        switch feedback {
        case .spawned(let app, let pid):
            event { machine, _ in machine.spawned(app: app, pid: pid) }
        case .spawnFailed(let app, let reason):
            event(flush: true) { $0.spawnFailed(app: app, reason: reason, now: $1) }
        case .deadlinePassed(let app, let token):
            event(flush: true) { $0.deadlinePassed(app: app, token: token, now: $1) }
        case .graceExpired(let app, let token):
            event(flush: true) { $0.graceExpired(app: app, token: token, now: $1) }
        case .quitStepExpired(let app, let token):
            event(flush: true) { [grace = configuration.shutdownGrace] machine, _ in machine.quitStepExpired(app: app, token: token, grace: grace) }
        }
    }
}
