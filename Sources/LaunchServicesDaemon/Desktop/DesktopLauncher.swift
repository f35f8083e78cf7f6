import CLaunchServicesShim
import LaunchServicesCore
import LaunchServicesSystemd
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Starts desktop apps as the user's processes and tells each caller only what is known:
/// `running` (alive after the grace), `forwarded` (exited 0 within it), `exited` (with its
/// status and the last lines of its stderr) or `failedToStart` (what failed, the path and
/// errno). It decides nothing about which app; it carries out a `DesktopLaunchRequest`.
///
/// Each process starts through a waiter (`DesktopSpawn`): the app is never the daemon's
/// descendant, so it outlives the daemon, and the daemon's subreaper never adopts or ends
/// it or anything it starts. Under systemd it is moved into a scope of its own
/// (`DesktopScopes`), so stopping the daemon's service does not end it either. The waiter
/// reports the start, then the exit within the grace (with a status only a parent can read)
/// or that the grace passed; the daemon then watches the app through its pidfd until it
/// exits (`runningApps`).
///
/// Confined to the loop; nothing here blocks it: the spawn is a fork like the native apps'
/// spawn, reports and exits are read on a Dispatch queue, the stderr copy on the loop
/// without blocking, scopes on a queue of their own. Every wait is bounded: the grace, the
/// settle for stderr, a margin for the waiter's reports.
package final class DesktopLauncher: DesktopLaunching {
    private let loop: EventLoop
    private let settings: DesktopLaunchSettings
    private let output: AppOutput?
    private let logger: Logger
    private let scopes: DesktopScopes
    /// `KEY=VALUE` of the daemon's environment, less what is the daemon's own.
    private let baseEnvironment: [String]
    private let searchPath: String?
    private let terminalVariable: String?
    /// `tee`, which carries a desktop app's stderr on (see `DesktopOutput`); `nil`: none found.
    let forwarder: String?
    private var launches: [Int: Launch] = [:]
    private var watched: [Int32: Watched] = [:]
    private var nextID = 0
    private var stopping = false
    private var warnedNotSibling = false

    /// Variables that belong to the daemon (its supervision, its socket activation, its
    /// journal stream) or to a launcher, never passed on.
    static let daemonVariables: Set<String> = [
        "LAUNCHSERVICES_APP_FD", "LAUNCHSERVICES_DAEMON_PID", "LAUNCHSERVICES_BUNDLE_ID", "LAUNCHSERVICES_BUNDLE_PATH",
        "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
        "INVOCATION_ID", "JOURNAL_STREAM", "MANAGERPID", "SYSTEMD_EXEC_PID",
        "GIO_LAUNCHED_DESKTOP_FILE", "GIO_LAUNCHED_DESKTOP_FILE_PID",
    ]

    /// `environment` is what apps inherit (the daemon's, less its own variables); its PATH
    /// finds programs and its TERMINAL the terminal emulator. `socketPath`, when given,
    /// is passed on as `LAUNCHSERVICES_SOCKET` so an app's `lsopen` reaches this daemon.
    /// `forwarder` is what carries stderr on (see `DesktopOutput`).
    package init(loop: EventLoop, settings: DesktopLaunchSettings = DesktopLaunchSettings(), output: AppOutput?, environment: [String: String],
                 socketPath: String? = nil, forwarder: StderrForwarder = .tee, logger: Logger) {
        self.loop = loop
        self.settings = settings
        self.output = output
        self.logger = logger
        var variables = environment.filter { !Self.daemonVariables.contains($0.key) }
        if let socketPath { variables["LAUNCHSERVICES_SOCKET"] = socketPath }
        baseEnvironment = variables.map { "\($0.key)=\($0.value)" }.sorted()
        searchPath = environment["PATH"]
        terminalVariable = environment["TERMINAL"]
        scopes = DesktopScopes(settings: settings, runtimeDirectory: environment["XDG_RUNTIME_DIR"])
        switch forwarder {
        case .tee: self.forwarder = ProgramPath.find("tee", path: environment["PATH"]) ?? ["/usr/bin/tee", "/bin/tee"].first(where: ProgramPath.isExecutableFile)
        case .program(let path): self.forwarder = path
        case .none: self.forwarder = nil
        }
        if self.forwarder == nil {
            logger.warning("tee is not on PATH: desktop apps' stderr goes straight to its destination and outcomes carry none of it")
        }
    }

    // MARK: What the rest of the daemon sees

    /// What carries a desktop app's stderr on: `tee` found on PATH (the default), a given
    /// program taking the same arguments, or nothing (stderr straight to its destination).
    package enum StderrForwarder: Sendable {
        case tee
        case program(String)
        case none
    }

    package var runningApps: [RunningDesktopApp] {
        watched.values.map(\.app).sorted { $0.pid < $1.pid }
    }

    /// Whether `pid` is a desktop app the daemon started and still watches.
    package func isDesktopApp(pid: Int32) -> Bool {
        watched[pid] != nil
    }

    package func launch(_ request: DesktopLaunchRequest, completion: @escaping ([DesktopLaunchOutcome]) -> Void) {
        loop.assertInEventLoop()
        guard !request.commands.isEmpty else {
            completion([.failed(.exec(.empty))])
            return
        }
        let collected = Collected(count: request.commands.count, completion: completion)
        for (index, argv) in request.commands.enumerated() {
            start(argv, request) { outcome in collected.set(index, outcome) }
        }
    }

    package func shutdown() {
        loop.assertInEventLoop()
        stopping = true
        for launch in launches.values.sorted(by: { $0.id < $1.id }) {
            switch launch.phase {
            case .starting:
                if let pid = launch.pid, launch.pidfd >= 0, !DesktopExitWatch.hasExited(pidfd: launch.pidfd) {
                    finish(launch, .running(pid: pid))
                } else {
                    finish(launch, .failed(.stopping))
                }
            case .exited:
                finishExited(launch)
            case .answered:
                break
            }
        }
        for entry in watched.values { entry.watch?.cancel() }
        watched.removeAll()
    }

    // MARK: One process

    private func start(_ command: [String], _ request: DesktopLaunchRequest, answer: @escaping (DesktopLaunchOutcome) -> Void) {
        guard !stopping else { return answer(.failed(.stopping)) }
        guard watched.count + launches.count < settings.maximumRunning else {
            return answer(.failed(.tooManyRunning(limit: settings.maximumRunning)))
        }
        var argv = command
        // The command's own program is checked here even when a terminal will run it: a
        // terminal told to run a missing program would only show it failing.
        guard let program = argv.first, ProgramPath.find(program, path: searchPath) != nil else {
            return answer(.failed(.programNotFound(program: argv.first ?? "")))
        }
        if request.terminal {
            let wanted = TerminalCommand.program(terminalVariable: terminalVariable)
            guard let terminal = ProgramPath.find(wanted, path: searchPath) else {
                return answer(.failed(TerminalCommand.notFound(terminalVariable: terminalVariable)))
            }
            argv = TerminalCommand.wrap(argv, in: terminal)
        }
        guard let path = ProgramPath.find(argv[0], path: searchPath) else {
            return answer(.failed(.programNotFound(program: argv[0])))
        }
        var environment = baseEnvironment
        var pidIndex: Int?
        if let entryPath = request.entryPath {
            environment.append("GIO_LAUNCHED_DESKTOP_FILE=" + entryPath)
            pidIndex = environment.count
            environment.append("GIO_LAUNCHED_DESKTOP_FILE_PID=" + String(repeating: "X", count: 20))
        }
        var problems: [String] = []
        let prepared = DesktopOutput.prepare(output, journalIdentifier: request.applicationID, fileName: request.desktopID,
                                             forwarder: forwarder != nil, problems: &problems)
        for problem in problems { logger.warning("\(problem)", metadata: ["desktop_id": "\(request.desktopID)"]) }
        let started: DesktopSpawn.Started
        do {
            started = try DesktopSpawn.start(path: path, argv: argv, environment: environment, directory: request.workingDirectory,
                                             pidVariableIndex: pidIndex, output: prepared, forwarder: forwarder,
                                             graceMilliseconds: settings.graceMilliseconds)
        } catch {
            return answer(.failed(error))
        }
        if !started.sibling, !warnedNotSibling {
            warnedNotSibling = true
            logger.warning("desktop apps start as the daemon's children here (it is PID 1 of its namespace, or a sanitizer build): they end when it stops")
        }
        nextID += 1
        let launch = Launch(id: nextID, request: request, path: path, tail: StderrTail(maximumBytes: settings.stderrTailBytes, maximumLines: settings.stderrTailLines), answer: answer)
        launches[launch.id] = launch
        let id = launch.id
        let bound = NIOLoopBound(self, eventLoop: loop)
        launch.reports = DesktopWaiterReports(fd: started.reportFD) { reports in
            bound.eventLoop.execute { bound.value.received(reports, launch: id) }
        }
        if started.tailFD >= 0 {
            let channel = StderrTailReader.open(fd: started.tailFD, on: loop,
                                                received: { bytes in bound.value.tailReceived(bytes, launch: id) },
                                                ended: { bound.value.tailEnded(launch: id) })
            channel.whenFailure { _ in
                close(started.tailFD)
                bound.value.tailEnded(launch: id)
            }
            launch.tailChannel = channel
        } else {
            launch.tailEnded = true
        }
        launch.deadline = loop.assumeIsolated().scheduleTask(in: TimeAmount(settings.grace + settings.stderrSettle + settings.reportMargin)) { [self] in
            waiterSilent(launch: id)
        }
    }

    private func received(_ reports: [DesktopWaiterReport], launch id: Int) {
        guard let launch = launches[id] else {
            for case .started(_, _, _, let pidfd) in reports where pidfd >= 0 { close(pidfd) }
            return
        }
        for report in reports {
            switch report {
            case .started(let pid, let forwarderPID, let forwarderError, let pidfd):
                launch.pid = pid
                launch.pidfd = pidfd
                if forwarderError != 0 {
                    logger.warning("the stderr forwarder did not start (\(String(cString: strerror(forwarderError)))): this app's stderr is not kept",
                                   metadata: ["desktop_id": "\(launch.request.desktopID)", "pid": "\(pid)"])
                }
                watched[pid] = Watched(app: RunningDesktopApp(desktopID: launch.request.desktopID, pid: pid, scope: nil))
                requestScope(launch, pids: forwarderPID > 0 ? [pid, forwarderPID] : [pid])
            case .failed(let code, let stage):
                let (name, path) = describe(stage: stage, launch: launch)
                finish(launch, .failed(.system(stage: name, path: path, errno: code, reason: String(cString: strerror(code)))))
            case .exited(let status):
                exited(launch, status: DesktopExitWatch.exitStatus(status))
            case .detached:
                answerRunning(launch)
            case .ended:
                waiterSilent(launch: id)
            }
        }
    }

    private func describe(stage: Int32, launch: Launch) -> (String, String) {
        switch stage {
        case Int32(LS_DESKTOP_STAGE_CHDIR): return ("chdir", launch.request.workingDirectory ?? "")
        case Int32(LS_DESKTOP_STAGE_EXEC): return ("exec", launch.path)
        case Int32(LS_DESKTOP_STAGE_SETUP): return ("setting up the descriptors of", launch.path)
        default: return ("starting", launch.path)
        }
    }

    /// The app exited within the grace: answer at once for status 0, else once the last of
    /// its stderr is in (or the settle ends). The process is no longer watched; whoever
    /// adopts the zombie reaps it.
    private func exited(_ launch: Launch, status: ExitStatus?) {
        guard launch.phase == .starting else { return }
        launch.phase = .exited(status)
        if let pid = launch.pid { watched[pid] = nil }
        if launch.pidfd >= 0 {
            close(launch.pidfd)
            launch.pidfd = -1
        }
        // Status 0 (forwarded) shows no stderr; only a failure waits for its last lines.
        if launch.tailEnded || status == .exited(0) { return finishExited(launch) }
        let id = launch.id
        launch.settle = loop.assumeIsolated().scheduleTask(in: TimeAmount(settings.stderrSettle)) { [self] in
            if let launch = launches[id] { finishExited(launch) }
        }
    }

    private func finishExited(_ launch: Launch) {
        guard case .exited(let status) = launch.phase, let pid = launch.pid else { return }
        finish(launch, .ended(pid: pid, status: status, stderrTail: launch.tail.lines))
    }

    /// Alive when the grace ended: `running`, and watched from now on through its pidfd.
    private func answerRunning(_ launch: Launch) {
        guard launch.phase == .starting, let pid = launch.pid else { return }
        let pidfd = launch.pidfd
        launch.pidfd = -1
        finish(launch, .running(pid: pid))
        guard pidfd >= 0 else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        let watch = DesktopExitWatch(pidfd: pidfd, pid: pid) { status in
            bound.eventLoop.execute { bound.value.desktopAppExited(pid: pid, status: status) }
        }
        if watched[pid] != nil {
            watched[pid]?.watch = watch
        } else {
            watch.cancel()
        }
    }

    /// The waiter ended, or did not report within its bound: answer from what the daemon
    /// sees itself.
    private func waiterSilent(launch id: Int) {
        guard let launch = launches[id], launch.phase == .starting else { return }
        guard let pid = launch.pid, launch.pidfd >= 0 else {
            return finish(launch, .failed(.system(stage: "starting", path: launch.path, errno: 0,
                                                  reason: "the process that starts the app ended before it reported")))
        }
        if DesktopExitWatch.hasExited(pidfd: launch.pidfd) {
            var status: Int32 = 0
            let known = ls_pidfd_exit_status(launch.pidfd, pid, &status) == 1
            exited(launch, status: known ? DesktopExitWatch.exitStatus(status) : nil)
        } else {
            answerRunning(launch)
        }
    }

    private func tailReceived(_ bytes: ByteBuffer, launch id: Int) {
        launches[id]?.tail.append(bytes.readableBytesView)
    }

    private func tailEnded(launch id: Int) {
        guard let launch = launches[id], !launch.tailEnded else { return }
        launch.tailEnded = true
        if case .exited = launch.phase { finishExited(launch) }
    }

    private func finish(_ launch: Launch, _ outcome: DesktopLaunchOutcome) {
        guard launches[launch.id] != nil else { return }
        launches[launch.id] = nil
        launch.phase = .answered
        launch.deadline?.cancel()
        launch.settle?.cancel()
        launch.reports?.cancel()
        launch.tailChannel?.whenSuccess { $0.close(promise: nil) }
        if launch.pidfd >= 0 {
            close(launch.pidfd)
            launch.pidfd = -1
        }
        if outcome.kind != .running, let pid = launch.pid { watched[pid] = nil }
        var metadata: Logger.Metadata = ["desktop_id": "\(launch.request.desktopID)", "program": "\(launch.path)", "outcome": "\(outcome.kind.rawValue)"]
        if let pid = outcome.pid { metadata["pid"] = "\(pid)" }
        if outcome.kind.isSuccess {
            logger.info("desktop app \(outcome)", metadata: metadata)
        } else {
            logger.notice("desktop app \(outcome)", metadata: metadata)
        }
        launch.answer(outcome)
    }

    private func desktopAppExited(pid: Int32, status: ExitStatus?) {
        guard let entry = watched.removeValue(forKey: pid) else { return }
        logger.info("desktop app exited: \(status.map { "\($0)" } ?? "status unknown")",
                    metadata: ["desktop_id": "\(entry.app.desktopID)", "pid": "\(pid)"])
    }

    private func requestScope(_ launch: Launch, pids: [Int32]) {
        let unit = TransientScope.unitName(launcher: settings.scopeLauncher, appID: launch.request.applicationID, random: UInt64.random(in: 0...UInt64.max))
        let description = (launch.request.name ?? launch.request.applicationID) + " (started by launchservicesd)"
        let pid = pids[0]
        let desktopID = launch.request.desktopID
        let bound = NIOLoopBound(self, eventLoop: loop)
        scopes.request(unit: unit, description: description, pids: pids) { result in
            bound.eventLoop.execute { bound.value.scopeResult(result, pid: pid, desktopID: desktopID) }
        }
    }

    private func scopeResult(_ result: DesktopScopes.Result, pid: Int32, desktopID: String) {
        switch result {
        case .started(let unit):
            watched[pid]?.app.scope = unit
            logger.debug("desktop app in its scope", metadata: ["desktop_id": "\(desktopID)", "pid": "\(pid)", "scope": "\(unit)"])
        case .failed(let unit, let reason):
            // An app that already exited (one that handed the URL over) cannot be moved: no news.
            let level: Logger.Level = watched[pid] == nil ? .debug : .warning
            logger.log(level: level, "no scope for a desktop app: \(reason)", metadata: ["desktop_id": "\(desktopID)", "pid": "\(pid)", "scope": "\(unit)"])
        case .busy:
            logger.warning("no scope for a desktop app: too many scope requests wait", metadata: ["desktop_id": "\(desktopID)", "pid": "\(pid)"])
        case .notUnderSystemd:
            break
        }
    }
}
