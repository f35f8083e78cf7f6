import Dispatch
import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The daemon: its start, its stop, and the rooms that serve in between (`DaemonRooms`).
/// Each room owns its state: the launch state machine decides every app's fate
/// (`AppLifecycle`), the connection service routes each request to the room that answers
/// it, and the registry, opens, callbacks, check-ins, pasteboards, processes, storage and
/// administration each keep to their own folder.
///
/// Everything runs on one event loop: every channel, timer and exit notification is brought
/// onto `loop`, so the rooms need no locks. NIO checks that confinement: the rooms live in a
/// `NIOLoopBoundBox`, and this type holds nothing else that can change, so it is `Sendable`
/// (swift-service-lifecycle calls it from its tasks) without taking anything on trust.
public final class LaunchServicesDaemon: Sendable {
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
    let workers: DaemonWorkers
    /// How long a stop waits for the state databases' queues before it gives up closing
    /// them (`DatabaseClosing`).
    let databaseCloseTimeout: Duration
    /// Every room, usable only on `loop`.
    let rooms: NIOLoopBoundBox<DaemonRooms>

    public convenience init(configuration: DaemonConfiguration, socketPath: String, stateFolder: String? = nil, activatedSocket: Int32? = nil, loop: EventLoop, logger: Logger) {
        self.init(configuration: configuration, socketPath: socketPath, stateFolder: stateFolder, activatedSocket: activatedSocket,
                  launcher: AppLauncher(socketPath: socketPath, output: Self.appOutput(configuration, stateFolder: stateFolder)), loop: loop, logger: logger)
    }

    /// Where the apps this daemon spawns write (reported by `status` as `appLogs`).
    static func appOutput(_ configuration: DaemonConfiguration, stateFolder: String?) -> AppOutput {
        AppOutput.choose(configuration.appLogs, stateFolder: stateFolder ?? DaemonConfiguration.defaultStateFolder())
    }

    /// A daemon whose apps are started by `launcher` and whose blocking work runs on
    /// `workers` (the testing kit passes apps that live in memory, and workers on its loop).
    package init(configuration: DaemonConfiguration, socketPath: String, stateFolder: String?, activatedSocket: Int32?, launcher: any AppLaunching, loop: EventLoop, logger: Logger,
                 workers: DaemonWorkers = .threads(), databaseCloseTimeout: Duration = .seconds(5)) {
        self.configuration = configuration
        self.socketPath = socketPath
        self.stateFolder = stateFolder
        self.activatedSocket = activatedSocket
        self.loop = loop
        self.logger = logger
        self.workers = workers
        self.databaseCloseTimeout = databaseCloseTimeout
        // Built here, off the loop, and handed to the box whole: nothing else holds them.
        rooms = .makeBoxSendingValue(DaemonRooms(configuration: configuration, socketPath: socketPath, stateFolder: stateFolder, launcher: launcher,
                                                 workers: workers, loop: loop, logger: logger), eventLoop: loop)
    }

    // MARK: Start

    /// Takes the state folder (its lock: a second daemon on it refuses, naming this one),
    /// makes sure no daemon serves the socket yet, then opens the registry (its counts and
    /// the apps folders' apps: `RegistryService.start`; the rest is read once the socket
    /// serves, `bind`) and loads the saved pasteboards (off the loop: it reads files), takes
    /// them on the loop (`OpenedStateFolder`); then watches the folder for kept damaged databases.
    public func loadRegistry() async throws {
        let opened = try OpenedStateFolder.open(stateFolder, socketPath: socketPath, activated: activatedSocket != nil,
                                                appsFolders: configuration.appsFolders, logger: logger)
        try await loop.submit { [rooms] in rooms.value.adopt(opened) }.get()
        guard let stateFolder else { return }
        // Armed after the list above was taken in; it lists again once armed, so nothing
        // removed or added meanwhile is missed, and its lists reach the loop in order.
        let watch: KeptDatabaseWatch?
        do {
            watch = try KeptDatabaseWatch(folder: stateFolder, queue: DispatchQueue(label: "launchservicesd.kept-databases")) { [loop, rooms] kept in
                loop.execute { rooms.value.storage.keptDatabases = kept }
            }
        } catch {
            watch = nil
            logger.warning("cannot watch \(stateFolder) for kept damaged databases (\(error)): lsctl status names those found at this start until the next")
        }
        try await loop.submit { [rooms] in rooms.value.storage.keptDatabaseWatch = watch }.get()
    }

    /// Binds the socket (owner-only), or adopts the socket-activated one, and starts serving.
    public func bind() async throws {
        try await loop.submit { [rooms] in
            rooms.value.supervisor.startReapingAdopted()
            // The first launch's connection, made before anyone asks for one.
            rooms.value.supervisor.prepareConnection(after: .zero)
        }.get()
        let rooms = rooms
        let channel = try await SocketListener.serve(
            path: socketPath, activated: activatedSocket, loop: loop, logger: logger,
            acceptFailed: { error in
                rooms.value.connections.limitReached(.fileDescriptors, "cannot accept connections (\(error)); serving the open ones and retrying every 100 ms")
            },
            pipeline: { channel in rooms.value.connections.installPipeline(on: channel, kind: .socket) })
        loop.execute {
            rooms.value.serverChannel = channel
            // On the session bus once the socket serves: a D-Bus caller's opens take the same path.
            rooms.value.sessionBus?.start()
            // The rest of the registry, now that the first answer need not wait for it.
            rooms.value.registry.finishLoading()
        }
    }

    /// Serves a connection made without the socket (the testing kit's in-memory channels);
    /// `peer` stands in for SO_PEERCRED. Call on the loop, before the channel becomes active.
    package func serve(_ channel: Channel, peer: PeerCredentials) -> EventLoopFuture<Void> {
        rooms.value.connections.installPipeline(on: channel, kind: .socket, peer: peer)
    }

    /// Tells the service manager the daemon is ready, and keeps it informed.
    public func startSupervision() {
        loop.execute { [rooms, loop, logger] in
            let serving = rooms.value
            serving.serviceManager.start(on: loop, logger: logger) { [unowned serving] in serving.statusLine }
        }
    }

    // MARK: Stop

    /// Stops serving: callers still waiting hear `unavailable`, apps' connections close (the
    /// app runtime exits when it loses the daemon), and apps still alive after the grace
    /// period are killed; then the databases close (`DatabaseClosing`). Nothing the daemon
    /// started outlives it.
    public func shutdown() async {
        try? await loop.flatSubmit { self.beginShutdown() }.get()
        let stragglers = try? await loop.submit { [rooms] in rooms.value.supervisor.endAdopted() }.get()
        if let stragglers, stragglers > 0 {
            logger.notice("ended \(stragglers) processes apps had started and left running")
        }
        // The desktop entries' reader hands each read to the loop: stopped above, a read
        // still under way finishes while the loop runs, not after it has ended (bounded).
        let deadline = DispatchTime.now() + .nanoseconds(Int(TimeAmount(databaseCloseTimeout).nanoseconds))
        if await DatabaseClosing.run(on: workers.desktopReads, until: deadline, {}) == nil {
            logger.warning("the desktop entries' read was still under way \(databaseCloseTimeout) after the stop began; stopping without it")
        }
        let closing = DatabaseClosing(loop: loop, logger: logger, timeout: databaseCloseTimeout)
        if let (registry, pasteboard) = try? await loop.submit({ [rooms] in (rooms.value.registry.store, rooms.value.pasteboards.store) }).get() {
            if let registry {
                await closing.close(registry.file, after: workers.files, on: workers.files) { try registry.close() }
            }
            if let pasteboard {
                await closing.close(pasteboard.file, after: workers.passwords, on: workers.pasteboardSaves) { try pasteboard.close() }
            }
        }
        logger.info("stopped")
    }

    /// The part of `shutdown` on the loop; succeeds once every app has exited.
    package func beginShutdown() -> EventLoopFuture<Void> {
        rooms.value.beginShutdown(grace: configuration.shutdownGrace)
    }

    // MARK: For the testing kit (package access: not for apps)

    /// Registers bundles in memory only, as if `lsctl register` had read them (no files):
    /// one at `time` (milliseconds since the Unix epoch), or several at one time, now, as
    /// one folder scan would.
    package func registerInMemory(_ bundles: [AppBundle], at time: Int64? = nil) {
        let registry = rooms.value.registry
        guard !bundles.isEmpty else { return }
        let time = time ?? registry.issueTime()
        for bundle in bundles { registry.register(bundle, source: .manual, at: time) }
    }

    /// Reads the apps folders and takes them in, then watches them, as `loadRegistry` does
    /// without a state folder, on the loop: for the testing kit, whose loop is its worker.
    package func loadAppsFoldersInMemory() throws {
        let registry = rooms.value.registry
        registry.apply(try RegistryService.read(stateFolder: nil, folders: configuration.appsFolders, now: registry.wallClock()))
    }

    /// Starts reading the desktop entries (as the start does once the registry is in).
    package func startDesktopEntries() { rooms.value.startDesktopEntries() }
    /// The desktop-entries room, on the loop.
    package var desktopEntries: DesktopService { rooms.value.desktop }
    /// When the desktop side first claimed `scheme`, as the registry keeps it.
    package func desktopClaim(on scheme: URLScheme) -> Int64? { rooms.value.registry.desktopClaims[scheme] }

    package func setDefaultInMemory(_ app: String?, for scheme: URLScheme) { rooms.value.registry.setDefault(app, for: scheme) }
    package func state(of app: String) -> AppState { rooms.value.lifecycle.machine.state(of: app) }
    package var frontmostApp: String? { rooms.value.lifecycle.machine.frontmost }
    package func opensInFlight(of app: String) -> Int { rooms.value.lifecycle.machine.apps[app]?.opensInFlight ?? 0 }
    package var opensAnswered: Int { rooms.value.records.ledger.served }
}

public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
