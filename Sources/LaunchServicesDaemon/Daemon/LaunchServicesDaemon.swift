import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The daemon: a short coordinator over small loop-confined parts. The launch state machine
/// decides every app's fate; `ActionExecutor` carries its actions out and reports back what
/// happened; `ConnectionTable` owns the peers, `ProcessSupervisor` the app processes,
/// `RegistryService` the registry and its database, `SocketListener` the socket, and
/// `ServiceManagerStatus` what systemd hears, `PasteboardService` the pasteboards. Requests
/// are routed in the `+Requests`, `+Queries`, `+Commands`, `+Callbacks` and `+CheckIn`
/// extensions.
///
/// Everything runs on one event loop: every channel, timer and exit notification is
/// brought onto `loop`, so state needs no locks. The compiler cannot see that confinement,
/// hence `@unchecked Sendable`; each entry point asserts it is on the loop.
// Cannot be checked: `DaemonService` holds it in a Sendable `Service` and calls its public async API off the loop (which hops on), so it must be Sendable while its state is loop-confined.
public final class LaunchServicesDaemon: @unchecked Sendable {
    /// The `sourceApplication` of opens from `lsopen`, `lsctl` and any other non-app peer.
    public static let shellIdentity = SourceIdentity.user
    /// The `sourceApplication` of a process an app started and let go (a double fork): it
    /// still descends from an app, which one is no longer known. It is no app and not the
    /// user: it may not administer, and its queries show no scheme.
    public static let orphanIdentity = SourceIdentity.orphanedApp
    public static let version = LaunchServicesVersion.current

    public let configuration: DaemonConfiguration
    public let socketPath: String
    /// Where the registry database lives; `nil` keeps nothing on disk.
    public let stateFolder: String?
    /// A listening socket handed over by socket activation, adopted instead of binding.
    let activatedSocket: Int32?
    let loop: EventLoop
    let logger: Logger
    let started: NIODeadline

    var machine: LaunchStateMachine
    let registryService: RegistryService
    let connections: ConnectionTable
    let supervisor: ProcessSupervisor
    let executor: ActionExecutor
    let launcher: any AppLaunching
    private let serviceManager = ServiceManagerStatus()
    /// The pasteboards, their requests' order and where persistent ones are kept.
    let pasteboardService: PasteboardService
    /// The state folder's lock (`StateFolderLock`), held from the start for the daemon's life.
    private var stateLock: StateFolderLock?
    /// Databases found damaged at this start and set aside (`lsctl status`).
    var damagedDatabases: [DamagedDatabase] = []
    /// The damaged databases kept in the state folder now, of this start or an earlier one
    /// (`lsctl status` names each until the user removes it), kept true by `keptDatabaseWatch`.
    var keptDatabases: [KeptDatabase] = []
    private var keptDatabaseWatch: KeptDatabaseWatch?
    /// What the daemon cannot keep, as it stands (`lsctl status`): e.g. no persistent
    /// pasteboards because `pasteboard.sqlite` could not be opened.
    var storageProblems: [String] = []
    /// Callback addresses reserved by callers that own no scheme (`lsopen --wait`), by token.
    var reservations: [String: CallbackReservation] = [:]
    /// canOpenURL denials already logged (app and scheme), so each is logged once.
    var deniedQueries: Set<String> = []
    private var serverChannel: Channel?
    /// How long a stop waits for the state databases' queues before it gives up closing
    /// them (`closeDatabases`).
    var databaseCloseTimeout: Duration = .seconds(5)
    /// Who a socket peer is (`identify`, which may walk `/proc`); a test replaces it to
    /// count the walks.
    var peerOrigin: (Int32) -> ProcessAncestry.Origin = { _ in .user }

    public convenience init(configuration: DaemonConfiguration, socketPath: String, stateFolder: String? = nil, activatedSocket: Int32? = nil, loop: EventLoop, logger: Logger) {
        self.init(configuration: configuration, socketPath: socketPath, stateFolder: stateFolder, activatedSocket: activatedSocket,
                  launcher: AppLauncher(socketPath: socketPath, output: Self.appOutput(configuration, stateFolder: stateFolder)), loop: loop, logger: logger)
    }

    /// Where the apps this daemon spawns write (reported by `status` as `appLogs`).
    static func appOutput(_ configuration: DaemonConfiguration, stateFolder: String?) -> AppOutput {
        AppOutput.choose(configuration.appLogs, stateFolder: stateFolder ?? DaemonConfiguration.defaultStateFolder())
    }

    /// `status`'s `appLogs`: `journal` or the log files' folder; `nil` when apps are not
    /// spawned as processes (the testing kit's launchers).
    var appLogsReport: String? { (launcher as? AppLauncher)?.output?.report }

    /// A daemon whose apps are started by `launcher` and whose blocking work runs on
    /// `workers` (the testing kit passes apps that live in memory, and workers on its loop).
    package init(configuration: DaemonConfiguration, socketPath: String, stateFolder: String?, activatedSocket: Int32?, launcher: any AppLaunching, loop: EventLoop, logger: Logger,
                 workers: DaemonWorkers = .threads()) {
        self.configuration = configuration
        self.socketPath = socketPath
        self.stateFolder = stateFolder
        self.activatedSocket = activatedSocket
        self.loop = loop
        self.logger = logger
        self.launcher = launcher
        started = loop.now
        machine = LaunchStateMachine(deadlines: configuration.deadlines, background: configuration.background, maximumOpensInFlight: configuration.maximumOpensInFlightPerApp)
        registryService = RegistryService(loop: loop, logger: logger, folders: configuration.appsFolders, watchFolders: configuration.watchAppsFolders, files: workers.files, wallClock: workers.wallClock, makeWatcher: workers.folderWatcher)
        connections = ConnectionTable(limits: configuration.connectionLimits, logger: logger, loop: loop)
        supervisor = ProcessSupervisor(loop: loop, launcher: launcher, logger: logger)
        executor = ActionExecutor(loop: loop, logger: logger, configuration: configuration, supervisor: supervisor, connections: connections)
        pasteboardService = PasteboardService(limits: configuration.pasteboardLimits, keepsState: stateFolder != nil, loop: loop, logger: logger, connections: connections,
                                              worker: workers.passwords, saver: workers.pasteboardSaves, hasher: workers.hasher,
                                              clock: { [wallClock = workers.wallClock] in UInt64(max(0, wallClock() / 1000)) })
        executor.feedback = { [unowned self] in handle($0) }
        executor.phaseIsRunning = { [unowned self] in machine.isRunning(app: $0, phaseToken: $1) }
        executor.bundle = { [unowned self] in registry.apps[$0] }
        executor.appPipeline = { [unowned self] channel, app in installPipeline(on: channel, kind: .app(app)) }
        supervisor.exited = { [unowned self] in processExited($0, status: $1) }
        peerOrigin = { [unowned self] in identify($0) }
        pasteboardService.released = { [unowned self] connection in
            // A peer that half-closed waits for these answers too; once they are out, it can go.
            if connection.finishedSending { closeIfDone(connection) }
        }
    }

    /// Monotonic nanoseconds, from the loop's clock (an embedded loop's in tests).
    var now: UInt64 { loop.now.uptimeNanoseconds }
    var registry: Registry { registryService.registry }

    // MARK: Start and stop

    /// Takes the state folder (its lock: a second daemon on it refuses, naming this one),
    /// makes sure no daemon serves the socket yet, then loads the registry and the saved
    /// pasteboards (off the loop: it reads files) and takes them on the loop. Nothing in the
    /// state folder is read or written before the lock, and nothing is scanned before the
    /// socket check. A damaged database is set aside and replaced (`DamagedDatabase`); a
    /// pasteboard database that cannot be used at all leaves the daemon serving without
    /// persistent pasteboards.
    public func loadRegistry() async throws {
        var lock: StateFolderLock?
        if let stateFolder {
            try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            lock = try StateFolderLock(folder: stateFolder, socket: socketPath)
        }
        if activatedSocket == nil { try SocketListener.refuseIfServed(socketPath) }
        let loaded = try RegistryService.read(stateFolder: stateFolder, folders: configuration.appsFolders)
        var damaged = [loaded.store?.damage].compactMap { $0 }
        var problems: [String] = []
        var pasteboardStore: PasteboardStore?
        var savedPasteboards: [Pasteboard] = []
        if let stateFolder {
            do {
                let store = try PasteboardStore(folder: stateFolder)
                if let damage = store.damage { damaged.append(damage) }
                savedPasteboards = try store.load()
                pasteboardStore = store
            } catch {
                problems.append("persistent pasteboards are not kept until launchservicesd restarts with a usable file: \(error)")
            }
        }
        for damage in damaged {
            logger.error("\(damage)", metadata: ["database": "\(damage.file)", "kept_as": "\(damage.keptAs)"])
        }
        for problem in problems { logger.error("\(problem)") }
        // A listing, not a read of the kept files: cheap however large they are.
        let kept = stateFolder.map { KeptDatabases.list(in: $0) } ?? []
        try await loop.submit { [self, lock, damaged, kept, problems, pasteboardStore, savedPasteboards] in
            stateLock = lock
            damagedDatabases = damaged
            keptDatabases = kept
            storageProblems = problems
            registryService.apply(loaded)
            pasteboardService.adopt(store: pasteboardStore, saved: savedPasteboards, problem: problems.first)
        }.get()
        if let stateFolder {
            // Armed after the list above was taken in; it lists again once armed, so nothing
            // removed or added meanwhile is missed, and its lists reach the loop in order.
            let watch: KeptDatabaseWatch?
            do {
                watch = try KeptDatabaseWatch(folder: stateFolder, queue: DispatchQueue(label: "launchservicesd.kept-databases")) { [loop, unowned self] kept in
                    loop.execute { self.keptDatabases = kept }
                }
            } catch {
                watch = nil
                logger.warning("cannot watch \(stateFolder) for kept damaged databases (\(error)): lsctl status names those found at this start until the next")
            }
            try await loop.submit { [self] in keptDatabaseWatch = watch }.get()
        }
    }

    /// Binds the socket (owner-only), or adopts the socket-activated one, and starts serving.
    public func bind() async throws {
        try await loop.submit { self.supervisor.startReapingAdopted() }.get()
        let channel = try await SocketListener.serve(
            path: socketPath, activated: activatedSocket, loop: loop, logger: logger,
            acceptFailed: { [self] error in
                connections.limitReached(.fileDescriptors, "cannot accept connections (\(error)); serving the open ones and retrying every 100 ms")
            },
            pipeline: { [self] channel in installPipeline(on: channel, kind: .socket) })
        loop.execute { self.serverChannel = channel }
    }

    /// Serves a connection made without the socket (the testing kit's in-memory channels);
    /// `peer` stands in for SO_PEERCRED. Call before the channel becomes active.
    package func serve(_ channel: Channel, peer: PeerCredentials) -> EventLoopFuture<Void> {
        installPipeline(on: channel, kind: .socket, peer: peer)
    }

    /// Frames and this daemon's handler on a new connection. `peer` stands in for
    /// SO_PEERCRED on channels that have no socket.
    func installPipeline(on channel: Channel, kind: ClientConnection.Kind, peer: PeerCredentials? = nil) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: configuration.maximumFrameLength)))
            try channel.pipeline.syncOperations.addHandler(ConnectionHandler(events: self, kind: kind, peer: peer))
        }
    }

    /// Tells the service manager the daemon is ready, and keeps it informed.
    public func startSupervision() {
        loop.execute { [self] in
            serviceManager.start(on: loop, logger: logger) { [unowned self] in statusLine }
        }
    }

    /// The one-line summary shown by `systemctl --user status`.
    var statusLine: String {
        "\(registry.apps.count) apps registered, \(machine.running.count) running, \(executor.ledger.served) opens served"
    }

    /// Stops serving: callers still waiting hear `unavailable`, apps' connections close (the
    /// app runtime exits when it loses the daemon), and apps still alive after the grace
    /// period are killed. Nothing the daemon started outlives it.
    public func shutdown() async {
        try? await loop.flatSubmit { self.beginShutdown() }.get()
        let stragglers = try? await loop.submit { self.supervisor.endAdopted() }.get()
        if let stragglers, stragglers > 0 {
            logger.notice("ended \(stragglers) processes apps had started and left running")
        }
        await closeDatabases()
        logger.info("stopped")
    }

    /// Closes the state databases once the writes queued for them are done, each on its own
    /// queue: SQLite copies the log into the file and removes it, so a stopped daemon leaves
    /// one file per database. The state folder's lock goes with the process.
    ///
    /// Work under way when the daemon stopped may still queue a write: a rescan (or a
    /// registration) reads on `files`, then saves from the loop on `files` again; a
    /// pasteboard copy with a password is hashed on `worker`, then saved from the loop on
    /// `saver`. So each close waits for that first queue, then for the loop, and only then
    /// goes on its own queue; nothing new starts once `beginShutdown` has stopped the folder
    /// watch and closed the connections. Closed straight away, such a late write failed
    /// and was logged as an error at the stop.
    ///
    /// Each database's wait is bounded (`databaseCloseTimeout`): a queue still busy then (a
    /// scan of a folder that does not answer) is left as it is, that file is not closed,
    /// and the next start replays its log.
    func closeDatabases() async {
        guard let (registry, pasteboard) = try? await loop.submit({ (self.registryService.store, self.pasteboardService.store) }).get() else { return }
        if let registry {
            await close(registry.file, after: registryService.files, on: registryService.files) { try registry.close() }
        }
        if let pasteboard {
            await close(pasteboard.file, after: pasteboardService.worker, on: pasteboardService.saver) { try pasteboard.close() }
        }
    }

    /// Closes one database on `queue` once `first` and then the loop have done what they
    /// had, within `databaseCloseTimeout`; says by name when it could not.
    private func close(_ file: String, after first: WorkQueue, on queue: WorkQueue, _ closing: @escaping @Sendable () throws -> Void) async {
        let deadline = DispatchTime.now() + .nanoseconds(Int(TimeAmount(databaseCloseTimeout).nanoseconds))
        var busy = first
        var result: Result<Void, Error>?
        if await Self.run(on: first, until: deadline, {}) != nil {
            _ = try? await loop.submit {}.get()
            busy = queue
            result = await Self.run(on: queue, until: deadline) { Result { try closing() } }
        }
        switch result {
        case .none:
            logger.warning("could not close \(file) within \(databaseCloseTimeout) of stopping: \(busy.label) is still busy; stopping without closing it (the next start replays its log)")
        case .failure(let failure)?:
            logger.warning("could not close \(file): \(failure)")
        case .success?:
            break
        }
    }

    /// Runs `work` on `queue` and waits for its result until `deadline`; nil if it has not
    /// finished by then (it still runs, later).
    private static func run<T: Sendable>(on queue: WorkQueue, until deadline: DispatchTime, _ work: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (done: CheckedContinuation<T?, Never>) in
            let answered = NIOLockedValueBox(false)
            let answer: @Sendable (T?) -> Void = { result in
                let first = answered.withLockedValue { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { done.resume(returning: result) }
            }
            queue.async { answer(work()) }
            DispatchQueue.global().asyncAfter(deadline: deadline) { answer(nil) }
        }
    }

    /// The part of `shutdown` on the loop; succeeds once every app has exited.
    package func beginShutdown() -> EventLoopFuture<Void> {
        loop.assertInEventLoop()
        serviceManager.stop()
        // What apps started and let go ends with the daemon too: asked now, killed later.
        supervisor.beginStopping()
        registryService.stop()
        keptDatabaseWatch?.cancel()
        serverChannel?.close(promise: nil)
        // The machine answers every waiting caller and resumes suspended apps (they must
        // run to notice their connection closing and exit).
        executor.cancelGraceTimers()
        perform(machine.shutdown(now: now))
        flushPending()
        for connection in connections.connections { connection.channel.close(promise: nil) }
        return supervisor.waitForAllToExit(grace: TimeAmount(configuration.shutdownGrace))
    }

    // MARK: Events in, actions out

    func perform(_ actions: [LaunchStateMachine.Action]) {
        executor.perform(actions)
    }

    /// What the executor learned while acting (or a connection that closed), handed to the
    /// machine. The executor calls it only once the action list that produced it is done,
    /// never from inside one; what the machine then returns is carried out at once.
    /// Whatever it sends is flushed here, since the event that started the list may have
    /// flushed already.
    private func handle(_ feedback: ActionExecutor.Feedback) {
        switch feedback {
        case .spawned(let app, let pid):
            perform(machine.spawned(app: app, pid: pid))
        case .spawnFailed(let app, let reason):
            perform(machine.spawnFailed(app: app, reason: reason, now: now))
            flushPending()
        case .deadlinePassed(let app, let token):
            perform(machine.deadlinePassed(app: app, token: token, now: now))
            flushPending()
        case .graceExpired(let app, let token):
            perform(machine.graceExpired(app: app, token: token, now: now))
            flushPending()
        case .quitStepExpired(let app, let token):
            perform(machine.quitStepExpired(app: app, token: token, grace: configuration.shutdownGrace))
            flushPending()
        case .answered(let connection):
            if connection.finishedSending { closeIfDone(connection) }
        case .closed(let connection):
            forgetClosed(connection)
        }
    }

    private func processExited(_ process: any SupervisedProcess, status: ExitStatus) {
        let app = process.bundleID
        executor.forget(app)
        if let connection = connections.detach(app) { connection.channel.close(promise: nil) }
        logger.info("\(app) \(status)", metadata: ["bundle_id": "\(app)", "pid": "\(process.pid)"])
        perform(machine.exited(app: app, status: status, now: now))
        flushPending()
    }

    func send(_ envelope: Envelope, to connection: ClientConnection) {
        connections.send(envelope, to: connection)
    }

    func flushPending() {
        connections.flush()
    }

    func readBatchEnded() {
        connections.flushAtEndOfTick()
    }
}

public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
