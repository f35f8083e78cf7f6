import Foundation
import LaunchServicesCore
import Logging
import NIOCore

/// Every room of the daemon, built and wired once, each owning its state: the registry,
/// the desktop entries, the connections, the app processes, the opens' records, the apps'
/// lifecycle (the state machine and its executor), callbacks, opening, check-in, pasteboards,
/// the state folder's status, administration, and the connection service that routes each request to its room.
/// A room holds the rooms it asks things of, never one above it; the one link back (a
/// connection's handler reports to the connection service) is set here. Confined to the
/// loop: `LaunchServicesDaemon` keeps it in a `NIOLoopBoundBox`.
final class DaemonRooms {
    let registry: RegistryService
    let desktop: DesktopService
    let connections: ConnectionTable
    let supervisor: ProcessSupervisor
    let records: OpenRecords
    let lifecycle: AppLifecycle
    let pasteboards: PasteboardService
    let storage = StorageStatus()
    let connectionService: ConnectionService
    /// What starts desktop apps, and the room that opens URLs in them.
    let desktopLaunchers: DesktopLaunchers
    let desktopOpening: DesktopOpening
    /// The daemon's name and objects on the session bus, when it has a bus connection.
    let sessionBus: SessionBusService?
    let serviceManager = ServiceManagerStatus()
    let loop: EventLoop
    /// The listening socket's channel, once bound.
    var serverChannel: Channel?

    init(configuration: DaemonConfiguration, socketPath: String, stateFolder: String?, launcher: any AppLaunching, workers: DaemonWorkers,
         loop: EventLoop, logger: Logger) {
        self.loop = loop
        registry = RegistryService(loop: loop, logger: logger, folders: configuration.appsFolders, watchFolders: configuration.watchAppsFolders,
                                   files: workers.files, wallClock: workers.wallClock, makeWatcher: workers.folderWatcher)
        desktop = DesktopService(settings: configuration.desktopEntries, environment: workers.environment,
                                 home: workers.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory(), loop: loop, logger: logger,
                                 worker: workers.desktopReads, makeWatcher: workers.desktopWatcher, wallClock: workers.wallClock)
        connections = ConnectionTable(limits: configuration.connectionLimits, maximumFrameLength: configuration.maximumFrameLength, logger: logger, loop: loop)
        supervisor = ProcessSupervisor(loop: loop, launcher: launcher, logger: logger)
        records = OpenRecords(loop: loop, logger: logger, connections: connections)
        lifecycle = AppLifecycle(configuration: configuration, loop: loop, logger: logger, connections: connections, supervisor: supervisor,
                                 registry: registry, records: records)
        pasteboards = PasteboardService(limits: configuration.pasteboardLimits, keepsState: stateFolder != nil, loop: loop, logger: logger, connections: connections,
                                        worker: workers.passwords, saver: workers.pasteboardSaves, hasher: workers.hasher,
                                        clock: { [wallClock = workers.wallClock] in UInt64(max(0, wallClock() / 1000)) })
        let appOutput = (launcher as? AppLauncher)?.output
        desktopLaunchers = workers.desktopLaunchers(loop, logger, configuration.desktopEntries.launch, appOutput, socketPath)
        desktopOpening = DesktopOpening(loop: loop, logger: logger, records: records, connections: connections, launcher: desktopLaunchers.launcher,
                                        activator: desktopLaunchers.activator)
        let callbacks = CallbackService(limits: configuration.connectionLimits, logger: logger, registry: registry, connections: connections, records: records)
        connectionService = ConnectionService(
            configuration: configuration, loop: loop, logger: logger, connections: connections, supervisor: supervisor, lifecycle: lifecycle, records: records,
            opening: OpenService(configuration: configuration, logger: logger, registry: registry, connections: connections, records: records,
                                 callbacks: callbacks, lifecycle: lifecycle, handlers: SchemeHandlers(registry: registry, desktop: desktop),
                                 desktopOpening: desktopOpening),
            callbacks: callbacks,
            checkIn: CheckInService(loop: loop, logger: logger, registry: registry, connections: connections, supervisor: supervisor, lifecycle: lifecycle),
            pasteboards: pasteboards,
            admin: AdminService(configuration: configuration, socketPath: socketPath, logger: logger, loop: loop,
                                appLogs: appOutput?.report, registry: registry, lifecycle: lifecycle, records: records,
                                pasteboards: pasteboards, storage: storage, connections: connections, desktop: desktop))
        connections.events = connectionService
        if let bus = desktopLaunchers.bus {
            let service = SessionBusService(loop: loop, logger: logger, bus: bus, connections: connections, maximumFrameLength: configuration.maximumFrameLength)
            lifecycle.stateReporter = AppStateReporter(canReceive: { bus.hasConnection },
                                                       changed: { [unowned service] in service.appStateChanged($0, state: $1, pid: $2) })
            sessionBus = service
        } else {
            sessionBus = nil
        }
        connectionService.admin.desktopRunning = { [unowned desktopOpening] in desktopOpening.runningApps }
        supervisor.exited = { [unowned lifecycle] in lifecycle.processExited($0, status: $1) }
    }

    /// What the start read from the state folder, taken in on the loop.
    func adopt(_ opened: OpenedStateFolder) {
        storage.adopt(opened)
        registry.begin(opened.registry, loaded: opened.loadedRegistry)
        startDesktopEntries()
        pasteboards.adopt(store: opened.pasteboardStore, saved: opened.savedPasteboards, problem: opened.problems.first)
    }

    /// Starts reading the desktop entries, on their own worker: the daemon serves before the
    /// first read is in (`DesktopService.whenReady`). The registry keeps when the desktop side
    /// first handled each scheme (its claim against native apps, `SchemeResolution`): after
    /// the first read and after every change.
    func startDesktopEntries() {
        // Once the registry is in (it may still load after the socket serves): the claims it keeps.
        let check = { [unowned self] in registry.whenLoaded { [unowned self] in registry.desktopHandlersChanged(handled: desktop.handledSchemes) } }
        desktop.changed = { _ in check() }
        desktop.start()
        try? desktop.whenReady { check() }
    }

    /// The one-line summary shown by `systemctl --user status`.
    var statusLine: String {
        "\(registry.counts.apps) apps registered, \(lifecycle.machine.running.count) running, \(records.ledger.served) opens served"
    }

    /// Stops serving: callers still waiting hear `unavailable`, apps' connections close (the
    /// app runtime exits when it loses the daemon), and apps still alive after the grace
    /// period are killed. Succeeds once every app has exited.
    func beginShutdown(grace: Duration) -> EventLoopFuture<Void> {
        serviceManager.stop()
        // What apps started and let go ends with the daemon too: asked now, killed later.
        supervisor.beginStopping()
        registry.stop()
        desktop.stop()
        storage.stop()
        serverChannel?.close(promise: nil)
        lifecycle.shutdown()
        // Desktop launches still under way are answered with what is known; the apps live on.
        desktopOpening.shutdown()
        sessionBus?.stop()
        connections.flush()
        for connection in connections.connections { connection.channel.close(promise: nil) }
        let busStopped = desktopLaunchers.stop(loop)
        return supervisor.waitForAllToExit(grace: TimeAmount(grace)).and(busStopped).map { _ in }
    }
}
