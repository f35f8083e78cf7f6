#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import Logging
import NIOCore

/// Owns the app processes: which app runs under which pid, starting them through the
/// launcher, signalling them, hearing of their exit, and the processes apps started and let
/// go (adopted by the daemon as child subreaper). It decides nothing: the launch state
/// machine says what to start, signal or kill, and this does it. Confined to the loop.
final class ProcessSupervisor {
    private let loop: EventLoop
    private let launcher: any AppLaunching
    private let logger: Logger
    private var processes: [String: any SupervisedProcess] = [:]
    private var appByPID: [Int32: String] = [:]
    private var allExited: EventLoopPromise<Void>?
    private var reaper: RepeatedTask?
    /// Whether this daemon took on the processes apps let go (`startReapingAdopted`). Only
    /// then are its other children theirs: a daemon in a test process must never signal
    /// the test's own children.
    private var adopting = false
    /// Whether the daemon ever started an app: only then can a socket peer be an app's
    /// descendant, so only then is a peer's ancestry read.
    private(set) var hasSpawned = false
    /// Called on the loop when a current process has exited, after it was forgotten.
    var exited: (any SupervisedProcess, ExitStatus) -> Void = { _, _ in }
    /// The connection the next launch uses, made while nothing was launching; at most one.
    private(set) var prepared: PreparedAppConnection?
    /// A connection is being made, or is due (`prepareConnection`).
    private var preparing = false
    /// Stopping, or the launcher makes no connections ahead: none is made.
    private var preparesNone = false
    /// Launches whose output is not heard yet, with when it will be, oldest first. The
    /// settling timer is set for the first exactly while there is one.
    private var settlingApps: [(at: NIODeadline, process: any LaunchedProcess)] = []
    /// How long after a launch its app's output is first read and the next launch's
    /// connection is made: after the app's own start, which, on a machine with fewer CPUs
    /// than runnable processes, that work would otherwise slow.
    static let settling: TimeAmount = .milliseconds(10)
    /// `settling`, or a longer one for a test that must act before a launch settles.
    private let settlingTime: TimeAmount

    init(loop: EventLoop, launcher: any AppLaunching, logger: Logger, settling: TimeAmount = ProcessSupervisor.settling) {
        self.loop = loop
        self.launcher = launcher
        self.logger = logger
        settlingTime = settling
    }

    var isEmpty: Bool { processes.isEmpty }

    /// The app a pid belongs to, if the daemon runs it.
    func app(pid: Int32) -> String? { appByPID[pid] }

    /// Whether the daemon runs a process for `app`.
    func isRunning(_ app: String) -> Bool { processes[app] != nil }

    /// Launches `bundle` and watches it. The caller adopts its connection (`connect`), on
    /// the connection prepared ahead when there is one. `settling` later the app's output is
    /// heard and the next connection made.
    func launch(_ bundle: AppBundle) throws(AppLauncher.SpawnError) -> any LaunchedProcess {
        let connection = prepared
        prepared = nil
        let process: any LaunchedProcess
        do {
            process = try launcher.launch(bundle, connection: connection)
        } catch {
            prepareConnection(after: settlingTime)
            throw error
        }
        hasSpawned = true
        track(process)
        settlingApps.append((loop.now + settlingTime, process))
        if settlingApps.count == 1 { scheduleSettling() }
        return process
    }

    /// Sets the one settling timer for the earliest launch not yet settled. A callback, not
    /// a scheduled task: a task's promise and future, made on every launch, cost about as
    /// much as the executable's check, while the new app waited for the CPU. A loop that
    /// will not take it (shutting down) settles at once: the app's output is heard.
    private func scheduleSettling() {
        guard let first = settlingApps.first else { return }
        do {
            try loop.assumeIsolated().scheduleCallback(at: first.at, handler: SettleCallback(supervisor: self))
        } catch {
            loopEnded()
        }
    }

    /// Hears the output of the launches settled by `now`, makes the next launch's
    /// connection, and sets the timer for the next launch still settling.
    fileprivate func settled(by now: NIODeadline) {
        while let first = settlingApps.first, first.at <= now {
            settlingApps.removeFirst()
            first.process.hearOutput()
        }
        makeConnection()
        scheduleSettling()
    }

    /// The loop is shutting down (or will not take the timer): every launched app's output
    /// is heard now, and no connection is made.
    fileprivate func loopEnded() {
        let settling = settlingApps
        settlingApps = []
        for entry in settling { entry.process.hearOutput() }
    }

    /// Makes the connection the next launch will use, `delay` from now, unless one is ready
    /// or on its way.
    func prepareConnection(after delay: TimeAmount) {
        guard needsConnection else { return }
        preparing = true
        loop.assumeIsolated().scheduleTask(in: delay) { [self] in
            preparing = false
            makeConnection()
        }
    }

    private var needsConnection: Bool { prepared == nil && !preparing && !preparesNone }

    /// Makes the next launch's connection now, unless one is ready or on its way. One that
    /// cannot be made now (descriptors run out) is tried again after the next launch, which
    /// makes its own meanwhile.
    private func makeConnection() {
        guard needsConnection else { return }
        guard let making = launcher.prepareConnection(on: loop) else {
            preparesNone = true
            return
        }
        preparing = true
        making.assumeIsolated().whenComplete { [self] result in
            preparing = false
            guard case .success(let connection) = result else { return }
            if preparesNone || prepared != nil {
                connection.discard()
            } else {
                prepared = connection
            }
        }
    }

    /// Watches a process the daemon did not start (an app checked in by hand).
    func track(_ process: any SupervisedProcess) {
        processes[process.bundleID] = process
        appByPID[process.pid] = process.bundleID
        let supervisor = NIOLoopBound(self, eventLoop: loop)
        process.watchExit { status in
            supervisor.eventLoop.execute { supervisor.value.processExited(process, status: status) }
        }
    }

    func signal(_ app: String, _ sig: Int32) {
        processes[app]?.signal(sig)
    }

    private func processExited(_ process: any SupervisedProcess, status: ExitStatus) {
        loop.assertInEventLoop()
        appByPID[process.pid] = nil
        guard let current = processes[process.bundleID], current === process else { return }
        processes[process.bundleID] = nil
        exited(process, status)
        if processes.isEmpty, let allExited {
            self.allExited = nil
            allExited.succeed()
        }
    }

    // MARK: Processes apps let go

    /// Reaps, once a second, the processes apps started and let go (see `AdoptedProcesses`).
    func startReapingAdopted() {
        adopting = true
        if let problem = AdoptedProcesses.adopt() {
            logger.warning("\(problem); processes apps let go will be reparented to init")
        }
        let supervisor = NIOLoopBound(self, eventLoop: loop)
        reaper = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            let apps = supervisor.value.appByPID
            _ = AdoptedProcesses.reapExited { apps[$0] != nil }
        }
    }

    // MARK: Stopping

    /// Asks the processes apps let go to end (killed by `endAdopted` after the grace period).
    func beginStopping() {
        preparesNone = true
        prepared?.discard()
        prepared = nil
        reaper?.cancel()
        guard adopting else { return }
        _ = AdoptedProcesses.signalAll(SIGTERM) { self.appByPID[$0] != nil }
    }

    /// Succeeds once every app has exited; apps still alive after `grace` are killed, and
    /// two seconds later the wait ends regardless.
    func waitForAllToExit(grace: TimeAmount) -> EventLoopFuture<Void> {
        loop.assertInEventLoop()
        guard !processes.isEmpty else { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        allExited = promise
        loop.assumeIsolated().scheduleTask(in: grace) { [self] in
            for process in processes.values {
                logger.warning("app did not exit after shutdown; killing it", metadata: ["bundle_id": "\(process.bundleID)", "pid": "\(process.pid)"])
                process.signal(SIGKILL)
            }
            loop.assumeIsolated().scheduleTask(in: .seconds(2)) { [self] in
                allExited?.succeed()
                allExited = nil
            }
        }
        return promise.futureResult
    }

    /// Ends what apps started and left running; returns how many there were.
    func endAdopted() -> Int {
        guard adopting else { return 0 }
        return AdoptedProcesses.endAll { self.appByPID[$0] != nil }
    }
}

/// The supervisor's settling timer (`ProcessSupervisor.scheduleSettling`). Called on the loop.
private struct SettleCallback: NIOScheduledCallbackHandler {
    let supervisor: ProcessSupervisor

    func handleScheduledCallback(eventLoop: some EventLoop) {
        supervisor.settled(by: eventLoop.now)
    }

    /// The loop shut down first: what the apps printed is still read.
    func didCancelScheduledCallback(eventLoop: some EventLoop) {
        supervisor.loopEnded()
    }
}
