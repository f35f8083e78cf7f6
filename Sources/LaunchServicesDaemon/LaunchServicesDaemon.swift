import CLaunchServicesShim
import Dispatch
import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesSystemd
import Logging
import NIOCore
import NIOPosix

/// The daemon: owns the registry and the launch state machine, and performs the machine's
/// actions (spawning, sending phases, arming deadlines, replying, terminating).
///
/// Everything runs on one event loop: every channel, timer and exit notification is
/// brought onto `loop`, so state needs no locks (hence `@unchecked Sendable`; each entry
/// point asserts it is on the loop).
public final class LaunchServicesDaemon: @unchecked Sendable {
    /// The `sourceApplication` of opens from `lsopen`, `lsctl` and any other non-app peer.
    public static let shellIdentity = SourceIdentity.user
    /// The `sourceApplication` of a process an app started and let go (a double fork): it
    /// still descends from an app, which one is no longer known. It is no app and not the
    /// user: it may not administer, and its queries show no scheme.
    public static let orphanIdentity = SourceIdentity.orphanedApp
    public static let version = "0.1.0"

    public let configuration: DaemonConfiguration
    public let socketPath: String
    /// Where the registry database lives; `nil` keeps nothing on disk.
    public let stateFolder: String?
    /// A listening socket handed over by socket activation, adopted instead of binding.
    let activatedSocket: Int32?
    let loop: EventLoop
    let logger: Logger
    let launcher: AppLauncher
    let exitQueue = DispatchQueue(label: "launchservicesd.exits")
    /// Where files a peer names are read (Info.plists), never on the event loop.
    let fileQueue = DispatchQueue(label: "launchservicesd.files")
    let started = NIODeadline.now()

    var registry = Registry()
    var store: RegistryStore?
    var sources: [String: RegistryStore.Source] = [:]
    var loadErrors: [BundleError] = []
    var machine: LaunchStateMachine
    var connections: [ObjectIdentifier: ClientConnection] = [:]
    /// Connections on the socket (not apps' launch connections), for `connections.maximumPerUser`.
    var socketConnections = 0
    var limitLog = LimitLog()
    var appConnections: [String: ClientConnection] = [:]
    var processes: [String: AppProcess] = [:]
    var appByPID: [Int32: String] = [:]
    var waiting: [UInt64: (connection: ClientConnection, id: UInt32)] = [:]
    /// The scheme and the asking app of each open in flight, for the outcome's log entry
    /// (`URL_SCHEME`, `SOURCE_APPLICATION`). Never the whole URL: it may carry secrets.
    var inFlight: [UInt64: (scheme: URLScheme, source: String, url: String)] = [:]
    private var deadlineTasks: [String: Scheduled<Void>] = [:]
    private var graceTasks: [String: Scheduled<Void>] = [:]
    var unflushed: [ObjectIdentifier: Channel] = [:]
    private var deniedQueries: Set<String> = []
    /// The pasteboards and where persistent ones are kept.
    var pasteboards = Pasteboards()
    var pasteboardStore: PasteboardStore?
    let pasteboardTraffic = PasteboardTraffic()
    /// Callback addresses reserved by callers that own no scheme (`lsopen --wait`), by token.
    var reservations: [String: CallbackReservation] = [:]
    private var nextRequestToken: UInt64 = 1
    var opensServed = 0
    var shuttingDown = false
    private var serverChannel: Channel?
    private var allExited: EventLoopPromise<Void>?
    private var supervision: RepeatedTask?
    private var reaper: RepeatedTask?
    /// Whether the daemon ever started an app: only then can a socket peer be an app's
    /// descendant, so only then is a peer's ancestry read.
    private(set) var hasSpawned = false
    private var watcher: FolderWatcher?
    private var pendingRescan: Scheduled<Void>?
    private var lastStatus = ""

    public init(configuration: DaemonConfiguration, socketPath: String, stateFolder: String? = nil, activatedSocket: Int32? = nil, loop: EventLoop, logger: Logger) {
        self.configuration = configuration
        self.socketPath = socketPath
        self.stateFolder = stateFolder
        self.activatedSocket = activatedSocket
        self.loop = loop
        self.logger = logger
        launcher = AppLauncher(socketPath: socketPath)
        machine = LaunchStateMachine(deadlines: configuration.deadlines, background: configuration.background)
    }

    var now: UInt64 { NIODeadline.now().uptimeNanoseconds }

    // MARK: Start and stop

    /// Loads the registry (off the loop: it reads files): what `lsctl register` added and
    /// the user's defaults from the database, then the apps folders. A folder bundle whose
    /// id was registered by hand from another path is refused; folder bundles that left
    /// their folder are withdrawn.
    public func loadRegistry() async throws {
        var stored: [RegistryStore.Stored] = []
        var defaults: [URLScheme: String] = [:]
        var store: RegistryStore?
        var pasteboardStore: PasteboardStore?
        var savedPasteboards: [Pasteboard] = []
        if let stateFolder {
            store = try RegistryStore(folder: stateFolder)
            (stored, defaults) = try store!.load()
            // Paths saved before they were made canonical (symbolic links, `..`) become
            // canonical, so the same bundle found in a folder is not taken for another.
            for index in stored.indices {
                guard let canonical = BundlePath.resolve(stored[index].app.path), canonical != stored[index].app.path else { continue }
                stored[index].app.path = canonical
                try store!.save(stored[index].app, source: stored[index].source)
            }
            pasteboardStore = try PasteboardStore(folder: stateFolder)
            savedPasteboards = try pasteboardStore!.load()
        }
        let manual = stored.filter { $0.source == .manual }.map(\.app)
        let manualPaths = Dictionary(manual.map { ($0.id, $0.path) }, uniquingKeysWith: { a, _ in a })
        let scan = BundleLoader.scan(folders: configuration.appsFolders)
        var errors = scan.errors
        var folderApps: [AppBundle] = []
        for bundle in scan.bundles {
            if let path = manualPaths[bundle.id] {
                if path != bundle.path {
                    errors.append(BundleError(path: bundle.path, key: "CFBundleIdentifier", problem: "'\(bundle.id)' is already registered from \(path) (lsctl register); unregister that first"))
                }
                continue
            }
            folderApps.append(bundle)
        }
        try store?.replaceFolderApps(folderApps)
        let (opened, loaded, refused, fromFolders) = (store, defaults, errors, folderApps)
        let (openedPasteboards, restored) = (pasteboardStore, savedPasteboards)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                self.store = opened
                self.pasteboardStore = openedPasteboards
                self.pasteboards = Pasteboards(limits: self.configuration.pasteboardLimits, restoring: restored)
                self.expirePasteboards()
                for app in manual {
                    self.registry.register(app)
                    self.sources[app.id] = .manual
                }
                for app in fromFolders {
                    self.registry.register(app)
                    self.sources[app.id] = .folder
                }
                for (scheme, id) in loaded { self.registry.setDefault(id, for: scheme) }
                self.loadErrors = refused
                for error in refused {
                    self.logger.warning("bundle refused: \(error)", metadata: ["bundle_path": "\(error.path)"])
                }
                self.startWatching()
                self.logger.info("registry loaded: \(self.registry.apps.count) apps (\(manual.count) registered by hand), \(self.registry.claimants.count) schemes, \(loaded.count) defaults, \(refused.count) refused")
                done.resume()
            }
        }
    }

    // MARK: Rescanning the apps folders

    /// Watches the apps folders; a change schedules one rescan 200 ms later (a burst of
    /// file events, such as copying a bundle in, becomes one rescan).
    private func startWatching() {
        guard configuration.watchAppsFolders else { return }
        let watcher = FolderWatcher(queue: exitQueue) { [self] in
            loop.execute {
                guard self.pendingRescan == nil, !self.shuttingDown else { return }
                self.pendingRescan = self.loop.scheduleTask(in: .milliseconds(200)) {
                    self.pendingRescan = nil
                    self.rescan { _ in }
                }
            }
        }
        watcher?.watch(configuration.appsFolders)
        self.watcher = watcher
    }

    /// Re-reads the apps folders (off the loop) and applies the difference: new and changed
    /// bundles are registered, bundles gone from the folders are withdrawn. Registrations
    /// made with `lsctl register` are not touched. `done` gets a summary, on the loop.
    func rescan(_ done: @escaping @Sendable (RescanSummary) -> Void) {
        let folders = configuration.appsFolders
        fileQueue.async { [self] in
            let scan = BundleLoader.scan(folders: folders)
            loop.execute {
                var summary = RescanSummary()
                var errors = scan.errors
                let scanned = Dictionary(scan.bundles.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                for (id, source) in self.sources where source == .folder && scanned[id] == nil {
                    self.registry.unregister(id)
                    self.sources[id] = nil
                    summary.removed.append(id)
                }
                var folderApps: [AppBundle] = []
                for bundle in scan.bundles {
                    if self.sources[bundle.id] == .manual {
                        if self.registry.apps[bundle.id]?.path != bundle.path {
                            errors.append(BundleError(path: bundle.path, key: "CFBundleIdentifier", problem: "'\(bundle.id)' is already registered from \(self.registry.apps[bundle.id]?.path ?? "?") (lsctl register); unregister that first"))
                        }
                        continue
                    }
                    if self.registry.apps[bundle.id] != bundle {
                        if self.registry.apps[bundle.id] == nil {
                            summary.added.append(bundle.id)
                        } else {
                            summary.changed.append(bundle.id)
                        }
                        self.registry.register(bundle)
                        self.sources[bundle.id] = .folder
                    }
                    folderApps.append(bundle)
                }
                do {
                    try self.store?.replaceFolderApps(folderApps)
                } catch {
                    self.logger.error("could not save the rescanned registry: \(error)")
                }
                self.loadErrors = errors
                summary.refused = errors.map(\.description)
                self.watcher?.watch(folders)
                if !summary.added.isEmpty || !summary.changed.isEmpty || !summary.removed.isEmpty {
                    self.logger.notice("apps folders rescanned: \(summary.added.count) added, \(summary.changed.count) changed, \(summary.removed.count) removed, \(errors.count) refused")
                }
                done(summary)
            }
        }
    }

    /// Binds the socket (owner-only), or adopts the socket-activated one, and starts serving.
    public func bind() async throws {
        if let problem = AdoptedProcesses.adopt() {
            logger.warning("\(problem); processes apps let go will be reparented to init")
        }
        loop.execute { self.startReapingAdopted() }
        if let activatedSocket {
            let channel = try await serverBootstrap().withBoundSocket(activatedSocket).get()
            loop.execute { self.serverChannel = channel }
            logger.info("serving \(socketPath) (socket-activated)", metadata: ["socket": "\(socketPath)"])
            return
        }
        let directory = (socketPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Self.checkSocketFolder(directory)
        if FileManager.default.fileExists(atPath: socketPath) {
            if (try? SocketProbe.isServed(socketPath)) == true {
                throw DaemonError("another launchservicesd already serves \(socketPath); stop it first or pass --socket")
            }
        }
        let channel = try await serverBootstrap()
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true)
            .get()
        chmod(socketPath, 0o600)
        loop.execute { self.serverChannel = channel }
        logger.info("serving \(socketPath)", metadata: ["socket": "\(socketPath)"])
    }

    /// Refuses a socket folder someone else could tamper with (the `/tmp/launchservices-UID`
    /// fallback could have been made by another user first): it must be a real folder, owned
    /// by this user or root, and not writable by others unless sticky (like `/tmp`).
    static func checkSocketFolder(_ directory: String) throws {
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            throw DaemonError("cannot inspect the socket folder \(directory): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw DaemonError("the socket folder \(directory) is not a folder (a symbolic link?); remove it or pass --socket")
        }
        guard info.st_uid == getuid() || info.st_uid == 0 else {
            throw DaemonError("the socket folder \(directory) belongs to uid \(info.st_uid), not to you (uid \(getuid())); someone else could replace the socket. Remove it or pass --socket")
        }
        guard info.st_mode & 0o022 == 0 || info.st_mode & S_ISVTX != 0 else {
            throw DaemonError("the socket folder \(directory) is writable by others (mode \(String(info.st_mode & 0o7777, radix: 8))); chmod go-w it or pass --socket")
        }
    }

    private func serverBootstrap() -> ServerBootstrap {
        let limit = configuration.maximumFrameLength
        return ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: 256)
            // Out of file descriptors (EMFILE), accept() fails at once and would be retried
            // in a busy loop: back off instead, keep serving the connections already open,
            // and say so once a minute at most.
            .serverChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { [self] error in
                        limitReached(.fileDescriptors, "cannot accept connections (\(error)); serving the open ones and retrying every 100 ms")
                        return .milliseconds(100)
                    })
                }
            }
            .childChannelOption(.writeBufferWaterMark, value: .init(low: ConnectionLimits.stopReadingAboveBytes / 2, high: ConnectionLimits.stopReadingAboveBytes))
            // A peer may shut down its sending side and still read its answers.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: limit)))
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(daemon: self, kind: .socket))
                }
            }
    }

    // MARK: Supervision by systemd

    /// Tells the service manager the daemon is ready, then keeps `STATUS=` current and, when
    /// `WatchdogSec=` is set, pings `WATCHDOG=1` at half the interval. The pings come from a
    /// task on the daemon's own loop, so a stalled loop stops pinging and systemd notices.
    public func startSupervision() {
        guard SystemdNotifier.isSupervised else { return }
        let watchdog = SystemdNotifier.watchdogInterval
        // Half the watchdog interval, and at least once a second so STATUS stays current.
        let interval = min(watchdog.map { $0 / 2 } ?? .seconds(1), .seconds(1))
        loop.execute {
            self.lastStatus = self.statusLine
            SystemdNotifier.notify("READY=1\nSTATUS=\(self.lastStatus)")
            self.supervision = self.loop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(Int64(interval.nanoseconds))) { _ in
                var assignments: [String] = []
                if watchdog != nil { assignments.append("WATCHDOG=1") }
                let status = self.statusLine
                if status != self.lastStatus {
                    self.lastStatus = status
                    assignments.append("STATUS=\(status)")
                }
                if !assignments.isEmpty { SystemdNotifier.notify(assignments.joined(separator: "\n")) }
            }
        }
        logger.debug("supervised by systemd; watchdog \(watchdog.map { "\($0)" } ?? "off")")
    }

    /// Reaps, once a second, the processes apps started and let go (see `AdoptedProcesses`).
    private func startReapingAdopted() {
        reaper = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [self] _ in
            AdoptedProcesses.reapExited { appByPID[$0] != nil }
        }
    }

    /// The one-line summary shown by `systemctl --user status`.
    var statusLine: String {
        "\(registry.apps.count) apps registered, \(machine.running.count) running, \(opensServed) opens served"
    }

    /// Stops serving: callers still waiting hear `unavailable`, apps' connections close (the
    /// app runtime exits when it loses the daemon), and apps still alive after the grace
    /// period are killed. Nothing the daemon started outlives it.
    public func shutdown() async {
        SystemdNotifier.notify("STOPPING=1\nSTATUS=stopping")
        let promise = loop.makePromise(of: Void.self)
        loop.execute {
            self.supervision?.cancel()
            self.reaper?.cancel()
            // What apps started and let go ends with the daemon too: asked now, killed below.
            AdoptedProcesses.signalAll(SIGTERM) { self.appByPID[$0] != nil }
            self.watcher?.cancel()
            self.pendingRescan?.cancel()
            self.shuttingDown = true
            self.serverChannel?.close(promise: nil)
            // The machine answers every waiting caller and resumes suspended apps (they must
            // run to notice their connection closing and exit).
            for task in self.graceTasks.values { task.cancel() }
            self.graceTasks.removeAll()
            self.perform(self.machine.shutdown(now: self.now))
            self.flushPending()
            for connection in self.connections.values { connection.channel.close(promise: nil) }
            if self.processes.isEmpty {
                promise.succeed()
                return
            }
            self.allExited = promise
            self.loop.scheduleTask(in: .nanoseconds(Int64(self.configuration.shutdownGrace.nanoseconds))) {
                for process in self.processes.values {
                    self.logger.warning("app did not exit after shutdown; killing it", metadata: ["bundle_id": "\(process.bundleID)", "pid": "\(process.pid)"])
                    process.signal(SIGKILL)
                }
                self.loop.scheduleTask(in: .seconds(2)) { self.allExited?.succeed(); self.allExited = nil }
            }
        }
        try? await promise.futureResult.get()
        let stragglers = try? await loop.submit {
            AdoptedProcesses.endAll { self.appByPID[$0] != nil }
        }.get()
        if let stragglers, stragglers > 0 {
            logger.notice("ended \(stragglers) processes apps had started and left running")
        }
        logger.info("stopped")
    }

    // MARK: Requests

    func received(_ envelope: Envelope, from connection: ClientConnection) {
        loop.assertInEventLoop()
        guard !connection.closing else { return }
        guard !connection.checkingIn else {
            protocolViolation("\(envelope.message.kindName) arrived while the app's check-in is verified; wait for welcome before sending requests", on: connection)
            return
        }
        guard connection.greeted else {
            greet(envelope, connection)
            return
        }
        if envelope.id == 0, envelope.message.isRequest {
            protocolViolation("\(envelope.message.kindName) has request id 0; request ids start at 1 (id 0 marks one-way and connection-level messages)", on: connection)
            return
        }
        switch envelope.message {
        case .open(let url, let annotation, let returnTo):
            open(url, annotation: annotation, returnTo: returnTo, id: envelope.id, from: connection)
        case .awaitCallback:
            reserveCallback(id: envelope.id, for: connection)
        case .pasteboard(let request):
            pasteboardRequested(request, id: envelope.id, from: connection)
        case .canOpen(let url):
            canOpen(url, id: envelope.id, from: connection)
        case .query, .command:
            admin(envelope, from: connection)
        case .phaseResult(let accepted, let method):
            guard let app = connection.appID else {
                protocolViolation("phaseResult comes only from apps the daemon launched", on: connection)
                return
            }
            perform(machine.phaseCompleted(app: app, token: UInt64(envelope.id), accepted: accepted, method: method, now: now))
        case .hello:
            protocolViolation("hello was sent twice", on: connection)
        default:
            protocolViolation("\(envelope.message.kindName) is not a request launchservicesd accepts", on: connection)
        }
    }

    private func greet(_ envelope: Envelope, _ connection: ClientConnection) {
        connection.helloDeadline?.cancel()
        connection.helloDeadline = nil
        guard case .hello(let version, let role, _, let bundlePath) = envelope.message else {
            protocolViolation("the first message must be hello, not \(envelope.message.kindName)", on: connection)
            return
        }
        guard version == Frame.protocolVersion else {
            protocolViolation("protocol version \(version) is not supported; this launchservicesd speaks version \(Frame.protocolVersion)", on: connection)
            return
        }
        switch (connection.kind, role) {
        case (.socket, .client):
            connection.greeted = true
            send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: connection.identity)), to: connection)
        case (.app(let id), .app):
            connection.greeted = true
            send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: id)), to: connection)
            perform(machine.checkedIn(app: id, now: now))
        case (.socket, .app) where bundlePath != nil && connection.descendsFromApp:
            connection.closing = true
            logger.warning("app check-in refused: pid \(connection.peerPID ?? 0) was started by \(connection.identity)", metadata: ["bundle_id": "\(connection.identity)"])
            Self.refuse(connection.channel, with: OpenError(.notPermitted, "this process was started by \(connection.identity) and speaks as it; it cannot check in as another app"))
        case (.socket, .app) where bundlePath != nil:
            attach(connection, bundlePath: bundlePath!)
        case (.socket, .app):
            connection.closing = true
            Self.refuse(connection.channel, with: OpenError(.notPermitted, "an app checks in only on the connection launchservicesd hands it at launch (fd 3); open one of its URLs to launch it"))
        case (.app, .client):
            protocolViolation("a launched app must say hello with role 'app'", on: connection)
        }
    }

    private func open(_ text: String, annotation: PropertyListValue?, returnTo: String?, id: UInt32, from connection: ClientConnection) {
        let url: ParsedURL
        do {
            url = try ParsedURL(text)
        } catch {
            send(Envelope(id: id, .openResult(.failure(OpenError(.invalidURL, "invalid URL: \(error)")))), to: connection)
            return
        }
        if let token = CallbackAddress.token(of: url) {
            routeCallback(url, token: token, returnTo: returnTo, id: id, from: connection)
            return
        }
        var warning: String?
        if let violation = callbackViolation(url, returnTo: returnTo, from: connection) {
            switch configuration.callbackPolicy {
            case .refuse:
                logger.warning("open refused: \(LogRedaction.redact(violation.message, urls: [violation.url, text]))", metadata: ["url_scheme": "\(url.scheme)", "outcome": "notPermitted", "peer": "\(connection.identity)"])
                var words = violation.parameter == "reply" ? "refused: \(violation.message)" : "refused to open \(text): \(violation.message)"
                if connection.identity == Self.shellIdentity, violation.parameter != "reply" {
                    words += "; lsopen owns no URL scheme, so use lsopen --wait to be called back"
                }
                let refusal = OpenError(.notPermitted, words + " (callbackPolicy 'refuse')")
                send(Envelope(id: id, .openResult(.failure(refusal, app: registry.handler(for: url.scheme)?.id))), to: connection)
                return
            case .flag:
                logger.notice("callback flagged: \(LogRedaction.redact(violation.message, urls: [violation.url, text]))", metadata: ["url_scheme": "\(url.scheme)", "peer": "\(connection.identity)"])
                warning = violation.message
            }
        }
        guard let app = registry.handler(for: url.scheme) else {
            logger.info("no handler", metadata: ["url_scheme": "\(url.scheme)", "outcome": "noHandler"])
            send(Envelope(id: id, .openResult(.failure(OpenError(.noHandler,
                "no app handles the scheme '\(url.scheme)' (URL \(text)); install an app whose Info.plist declares it in CFBundleURLTypes (see: lsctl apps)")))), to: connection)
            return
        }
        let limit = configuration.connectionLimits.maximumPendingRequests
        if connection.waiting.count >= limit {
            limitReached(.pendingRequests, "\(connection.identity) has \(limit) opens waiting on one connection")
            let busy = OpenError(.unavailable, "this connection already has \(limit) opens waiting for an answer, the limit (connections.maximumPendingRequests); wait for their answers or use another connection")
            send(Envelope(id: id, .openResult(.failure(busy, app: app.id))), to: connection)
            return
        }
        let token = nextRequestToken
        nextRequestToken += 1
        waiting[token] = (connection, id)
        inFlight[token] = (url.scheme, connection.identity, text)
        connection.waiting.insert(token)
        let request = OpenRequest(token: token, url: text, sourceApplication: connection.identity, annotation: annotation, warning: warning, caller: connection.serial)
        perform(machine.open(request, app: app.id, now: now))
    }

    private func canOpen(_ text: String, id: UInt32, from connection: ClientConnection) {
        let url: ParsedURL
        do {
            url = try ParsedURL(text)
        } catch {
            send(Envelope(id: id, .failure(OpenError(.invalidURL, "invalid URL: \(error)"))), to: connection)
            return
        }
        // An app (on its launch connection, or recognised by pid on the socket) may ask only
        // about the schemes it lists in LSApplicationQueriesSchemes (the iOS 9 rule).
        let askingApp = connection.appID ?? (connection.identity == Self.shellIdentity ? nil : connection.identity)
        if let askingApp {
            guard registry.apps[askingApp]?.queriesSchemes.contains(url.scheme) == true else {
                if deniedQueries.insert(askingApp + "\u{0}" + url.scheme.normalized).inserted {
                    logger.warning("canOpenURL denied: '\(url.scheme)' is not in \(askingApp)'s LSApplicationQueriesSchemes; answered false", metadata: ["bundle_id": "\(askingApp)", "url_scheme": "\(url.scheme)"])
                }
                send(Envelope(id: id, .canOpenResult(canOpen: false, app: nil)), to: connection)
                return
            }
        }
        let handler = registry.handler(for: url.scheme)
        send(Envelope(id: id, .canOpenResult(canOpen: handler != nil, app: askingApp == nil ? handler?.id : nil)), to: connection)
    }

    // MARK: Performing the state machine's actions

    func perform(_ actions: [LaunchStateMachine.Action]) {
        for action in actions {
            switch action {
            case .spawn(let app):
                spawn(app)
            case .sendLaunchMethod(let app, let phase, let token, let request):
                sendToApp(app, Envelope(id: UInt32(truncatingIfNeeded: token), .launchMethod(phase, Delivery(url: request.url, sourceApplication: request.sourceApplication, annotation: request.annotation, warning: request.warning))))
            case .deliver(let app, let token, let request):
                sendToApp(app, Envelope(id: UInt32(truncatingIfNeeded: token), .deliver(Delivery(url: request.url, sourceApplication: request.sourceApplication, annotation: request.annotation, warning: request.warning))))
            case .notify(let app, let notification):
                sendToApp(app, Envelope(id: 0, .notify(notification)))
            case .armDeadline(let app, _, let token, let after):
                deadlineTasks[app]?.cancel()
                deadlineTasks[app] = loop.scheduleTask(in: .nanoseconds(Int64(after.nanoseconds))) { [self] in
                    perform(machine.deadlinePassed(app: app, token: token, now: now))
                    flushPending()
                }
            case .reply(let token, let outcome):
                reply(token: token, outcome)
            case .terminate(let app, let pid, let reason):
                logger.warning("terminating \(app) (pid \(pid)): \(describe(reason))", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                processes[app]?.signal(SIGKILL)
            case .armGrace(let app, let token, let after):
                graceTasks[app]?.cancel()
                graceTasks[app] = loop.scheduleTask(in: .nanoseconds(Int64(after.nanoseconds))) { [self] in
                    graceTasks[app] = nil
                    perform(machine.graceExpired(app: app, token: token, now: now))
                    flushPending()
                }
            case .suspend(let app, let pid):
                logger.info("suspending \(app) (pid \(pid)): in the background for \(configuration.background.suspendAfter.map { "\($0)" } ?? "?")", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                processes[app]?.signal(SIGSTOP)
            case .resume(let app, let pid):
                logger.info("resuming \(app) (pid \(pid))", metadata: ["bundle_id": "\(app)", "pid": "\(pid)"])
                processes[app]?.signal(SIGCONT)
            }
        }
    }

    private func describe(_ reason: LaunchStateMachine.TerminationReason) -> String {
        switch reason {
        case .missedDeadline(let phase):
            return "it did not finish \(phase.rawValue) within \(configuration.deadlines[phase])"
        case .evicted:
            return "more than \(configuration.background.maximumLiveApps) apps are alive and it is the least recently used suspended one"
        case .disconnected:
            return "its connection to launchservicesd closed, so it can no longer be driven"
        }
    }

    private func spawn(_ app: String) {
        guard let bundle = registry.apps[app] else {
            perform(machine.spawnFailed(app: app, reason: "it is no longer registered", now: now))
            return
        }
        let process: AppProcess
        do {
            process = try launcher.spawn(bundle)
        } catch {
            logger.error("launch failed: \(error)", metadata: ["bundle_id": "\(app)", "phase": "launch", "outcome": "launchFailed"])
            perform(machine.spawnFailed(app: app, reason: error.description, now: now))
            return
        }
        perform(machine.spawned(app: app, pid: process.pid))
        hasSpawned = true
        processes[app] = process
        appByPID[process.pid] = app
        logger.debug("spawned \(app) (pid \(process.pid))", metadata: ["bundle_id": "\(app)", "pid": "\(process.pid)"])
        process.watchExit(queue: exitQueue) { [self] status in
            loop.execute { self.processExited(process, status: status) }
        }
        let limit = configuration.maximumFrameLength
        ClientBootstrap(group: loop)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: limit)))
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(daemon: self, kind: .app(app)))
                }
            }
            .withConnectedSocket(process.channelFD)
            .whenFailure { [self] error in
                logger.error("could not adopt \(app)'s connection: \(error)", metadata: ["bundle_id": "\(app)"])
                process.signal(SIGKILL)
            }
    }

    func processExited(_ process: AppProcess, status: ExitStatus) {
        loop.assertInEventLoop()
        let app = process.bundleID
        appByPID[process.pid] = nil
        guard processes[app] === process else { return }
        processes[app] = nil
        deadlineTasks.removeValue(forKey: app)?.cancel()
        graceTasks.removeValue(forKey: app)?.cancel()
        if let connection = appConnections.removeValue(forKey: app) { connection.channel.close(promise: nil) }
        logger.info("\(app) \(status)", metadata: ["bundle_id": "\(app)", "pid": "\(process.pid)"])
        perform(machine.exited(app: app, status: status, now: now))
        flushPending()
        if processes.isEmpty, let allExited {
            self.allExited = nil
            allExited.succeed()
        }
    }

    private func reply(token: UInt64, _ outcome: OpenOutcome) {
        opensServed += 1
        var metadata: Logger.Metadata = ["bundle_id": "\(outcome.app ?? "-")", "outcome": "\(outcome.error?.code.rawValue ?? "opened")"]
        let request = inFlight.removeValue(forKey: token)
        if let request {
            metadata["url_scheme"] = "\(request.scheme)"
            metadata["source_application"] = "\(request.source)"
        }
        if let phase = outcome.error?.phase { metadata["phase"] = "\(phase.rawValue)" }
        if let error = outcome.error {
            logger.notice("open failed: \(LogRedaction.redact(error.message, urls: request.map { [$0.url] } ?? []))", metadata: metadata)
        } else {
            // Who asked, what opened, and each phase: the line a person reads in the journal.
            let asked = request.map { "\($0.scheme): for \($0.source) " } ?? ""
            let phases = outcome.timings.map { "\($0.phase.rawValue) \(Self.milliseconds($0.nanoseconds))" }.joined(separator: ", ")
            logger.info("opened \(asked)in \(outcome.app ?? "?") via \(outcome.method?.rawValue ?? "?") (\(outcome.launched ? "launched" : "warm"): \(phases))", metadata: metadata)
        }
        guard let (connection, id) = waiting.removeValue(forKey: token) else { return }
        connection.waiting.remove(token)
        send(Envelope(id: id, .openResult(outcome)), to: connection)
        if connection.finishedSending { closeIfDone(connection) }
    }

    /// Nanoseconds as milliseconds with two decimals, for log lines.
    static func milliseconds(_ ns: UInt64) -> String { Milliseconds.text(ns, decimals: 2) + " ms" }

    private func sendToApp(_ app: String, _ envelope: Envelope) {
        guard let connection = appConnections[app] else { return }
        send(envelope, to: connection)
    }

    /// Queues a frame; `flushPending` writes every touched channel once per event.
    ///
    /// A peer that does not read its replies is paced (the handler stops reading its
    /// requests above `ConnectionLimits.stopReadingAboveBytes`) and, once more than
    /// `maximumQueuedOutputBytes` wait for it, disconnected: its replies are dropped.
    func send(_ envelope: Envelope, to connection: ClientConnection) {
        let channel = connection.channel
        guard !connection.overflowed else { return }
        let cap = configuration.connectionLimits.maximumQueuedOutputBytes
        if let queued = try? channel.syncOptions?.getOption(.bufferedWritableBytes), queued > cap {
            connection.overflowed = true
            connection.closing = true
            limitReached(.queuedOutput, "\(connection.identity) (pid \(connection.peerPID.map { "\($0)" } ?? "-")) left \(queued) bytes of replies unread; disconnected")
            logger.warning("disconnecting \(connection.identity): more than \(cap) bytes of replies queued and unread (connections.maximumQueuedOutputBytes)", metadata: ["peer": "\(connection.identity)"])
            channel.close(promise: nil)
            return
        }
        channel.write(channel.allocator.buffer(bytes: Frame.encode(envelope)), promise: nil)
        unflushed[ObjectIdentifier(channel)] = channel
    }

    func flushPending() {
        guard !unflushed.isEmpty else { return }
        for channel in unflushed.values { channel.flush() }
        unflushed.removeAll(keepingCapacity: true)
    }
}

public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (s, atto) = components
        return UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, atto)) / 1_000_000_000
    }
}
