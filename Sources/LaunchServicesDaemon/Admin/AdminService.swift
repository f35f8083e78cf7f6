#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The administrative plane: every `query` and `command` is parsed into an `AdminRequest`
/// (LaunchServicesProtocol/AdminRequest.swift) and routed here, in one place: inspections
/// to `answer(_:for:)` (AdminQueries.swift), registry changes to `RegistryCommands`,
/// `quit` to the lifecycle, `rescan` to the registry, and the test-only hooks to `debug`.
/// Registering, unregistering and defaults are the user's: an app is refused them.
/// What names handlers (`explain`, `default`, `register`'s answer, `schemes`, `conflicts`)
/// counts desktop entries too, so it waits for their first read (`DesktopService.whenReady`,
/// bounded).
/// Confined to the loop.
final class AdminService {
    let configuration: DaemonConfiguration
    let socketPath: String
    let logger: Logger
    let loop: EventLoop
    /// When the daemon started (the loop's clock), for `uptimeSeconds`.
    let started: NIODeadline
    /// `status`'s `appLogs`: `journal` or the log files' folder; nil when apps are not
    /// spawned as processes (the testing kit's launchers).
    let appLogs: String?
    let registry: RegistryService
    let lifecycle: AppLifecycle
    let records: OpenRecords
    let pasteboards: PasteboardService
    let storage: StorageStatus
    let connections: ConnectionTable
    let desktop: DesktopService
    private let commands: RegistryCommands
    /// The desktop apps the daemon started that still live (`lsctl running`).
    var desktopRunning: () -> [RunningDesktopApp] = { [] }

    init(configuration: DaemonConfiguration, socketPath: String, logger: Logger, loop: EventLoop, appLogs: String?, registry: RegistryService,
         lifecycle: AppLifecycle, records: OpenRecords, pasteboards: PasteboardService, storage: StorageStatus, connections: ConnectionTable,
         desktop: DesktopService) {
        self.configuration = configuration
        self.socketPath = socketPath
        self.logger = logger
        self.loop = loop
        started = loop.now
        self.appLogs = appLogs
        self.registry = registry
        self.lifecycle = lifecycle
        self.records = records
        self.pasteboards = pasteboards
        self.storage = storage
        self.connections = connections
        self.desktop = desktop
        commands = RegistryCommands(loop: loop, logger: logger, registry: registry, lifecycle: lifecycle, desktop: desktop)
    }

    func received(_ envelope: Envelope, from connection: ClientConnection) {
        guard let parsed = AdminRequest.parse(envelope.message) else { return }
        switch parsed {
        case .failure(let error):
            // An app's register or unregister is refused as not permitted whatever its
            // arguments, as it always was; any other ill-formed request is invalid.
            if let verb = error.knownVerb, verb == .register || verb == .unregister, let refusal = refusal(of: verb, from: connection) {
                return connections.send(Envelope(id: envelope.id, refusal), to: connection)
            }
            connections.send(Envelope(id: envelope.id, .failure(OpenError(.invalidRequest, error.description))), to: connection)
        case .success(.query(let query)):
            guard query == .schemes || query == .conflicts, !desktop.isReady else {
                return connections.send(Envelope(id: envelope.id, answer(query, for: connection)), to: connection)
            }
            // Answered later: flushed then, as a command's answer is.
            let send: (Message) -> Void = { [connections] answer in
                connections.send(Envelope(id: envelope.id, answer), to: connection)
                connections.flush()
            }
            afterDesktopRead(send) { [unowned self] in send(answer(query, for: connection)) }
        case .success(.command(let command)):
            execute(command, id: envelope.id, from: connection)
        case .success(.debug(let hook)):
            debug(hook, id: envelope.id, from: connection)
        }
    }

    /// Runs a command and sends its answer under `id`: at once, or once the work done off
    /// the loop is over (`register` reads a bundle, `rescan` the apps folders, `quit` waits
    /// for the app to end).
    private func execute(_ command: AdminCommand, id: UInt32, from connection: ClientConnection) {
        let reply: (Message) -> Void = { [connections] answer in
            connections.send(Envelope(id: id, answer), to: connection)
            connections.flush()
        }
        if let refusal = refusal(of: command.adminVerb, from: connection) { return reply(refusal) }
        switch command {
        case .register(let path):
            // Its answer names the handlers that keep its schemes, desktop entries too.
            afterDesktopRead(reply) { [commands] in commands.register(path: path, reply) }
        case .unregister(let bundleID):
            commands.unregister(bundleID, reply)
        case .showDefault(let scheme):
            afterDesktopRead(reply) { [commands] in commands.setDefault(schemeText: scheme, id: nil, clear: false, reply) }
        case .setDefault(let scheme, let app):
            afterDesktopRead(reply) { [commands] in commands.setDefault(schemeText: scheme, id: app, clear: false, reply) }
        case .clearDefault(let scheme):
            afterDesktopRead(reply) { [commands] in commands.setDefault(schemeText: scheme, id: nil, clear: true, reply) }
        case .explain(let url):
            afterDesktopRead(reply) { [unowned self] in
                reply(SchemeExplanation(registry, desktop: desktop).url(url, visible: visibleSchemes(for: connection)))
            }
        case .rescan:
            registry.rescan { summary in reply(.queryResult(json: JSONDocument.encode(summary))) }
        case .quit(let app):
            if let refusal = lifecycle.quit(app, id: id, from: connection) { reply(refusal) }
        }
    }

    /// Runs `body` once the desktop entries' first read is in (at once when it is, or when
    /// they are off), so an answer that names handlers counts them; when too many already
    /// wait, answers `unavailable` through `reply` instead.
    private func afterDesktopRead(_ reply: @escaping (Message) -> Void, _ body: @escaping () -> Void) {
        do {
            try desktop.whenReady(body)
        } catch {
            reply(.failure(OpenError(.unavailable, error.description)))
        }
    }

    /// Registering, unregistering and defaults change which app opens what for every caller,
    /// and quit ends an app: the user's tools may, an app may not (it could unregister or
    /// quit a rival, register itself, or make itself the default). The refusal for an app, or `nil` when the caller may.
    private func refusal(of verb: AdminVerb, from connection: ClientConnection) -> Message? {
        guard verb.userOnly, connection.appID != nil || connection.identity != LaunchServicesDaemon.shellIdentity else { return nil }
        switch verb {
        case .register, .unregister:
            return .failure(OpenError(.notPermitted, "\(connection.identity) is an app; only the user registers and unregisters apps (lsctl register PATH, lsctl unregister ID)"))
        case .quit:
            return .failure(OpenError(.notPermitted, "\(connection.identity) is an app; only the user quits apps (lsctl quit ID)"))
        default:
            return .failure(OpenError(.notPermitted, "\(connection.identity) is an app; only the user sets default handlers (lsctl default SCHEME BUNDLE-ID)"))
        }
    }

    /// Test-only hooks, each refused unless the daemon was started with its switch.
    private func debug(_ hook: DebugHook, id: UInt32, from connection: ClientConnection) {
        switch hook {
        case .stall:
            // Blocks the event loop for good, so that tests can show the watchdog restarting
            // a stalled daemon. Only with `LAUNCHSERVICES_DEBUG_STALL=1` in the daemon's environment.
            guard configuration.allowDebugStall else {
                connections.send(Envelope(id: id, .failure(OpenError(.notPermitted, "debug-stall is disabled; start launchservicesd with LAUNCHSERVICES_DEBUG_STALL=1 to allow it"))), to: connection)
                return
            }
            logger.warning("debug-stall requested: the event loop stops now")
            // Written by hand, as it always was: `{"stalling": true}` (a `DebugStallReport`).
            connections.send(Envelope(id: id, .queryResult(json: "{\"stalling\": true}")), to: connection)
            connections.flush()
            loop.execute { while true { sleep(3600) } }
        }
    }
}
