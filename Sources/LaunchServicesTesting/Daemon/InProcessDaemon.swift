#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesDaemon
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded

/// The daemon, in-process and deterministic: the real `LaunchServicesDaemon` (its state
/// machine, executor, connection table and supervisor) on an `EmbeddedEventLoop`, with
/// simulated apps instead of processes and in-memory clients instead of the socket. Time
/// moves only when the test says (`advance(by:)`), so deadlines, suspension and shutdown
/// are tested without sleeps or polling.
///
/// ```swift
/// let daemon = InProcessDaemon(apps: [.simulated("com.example.notes", schemes: ["notes"])])
/// let client = daemon.connect()
/// #expect(client.open("notes://today")?.opened == true)
/// ```
///
/// Use it from one thread (a synchronous test), like the embedded loop it runs on: the
/// daemon's own workers (files, password hashes, saves) run on that loop too.
public final class InProcessDaemon {
    public let loop = EmbeddedEventLoop()
    private let daemon: LaunchServicesDaemon
    private let launcher: SimulatedLauncher
    private let desktopLauncher: SimulatedDesktopLauncher
    private let lines = NIOLockedValueBox<[String]>([])
    private let watchers = NIOLockedValueBox<[TriggeredFolderWatcher]>([])
    private let desktopWatchers = NIOLockedValueBox<[TriggeredFolderWatcher]>([])

    /// What the daemon's wall clock reads at the start (2023-11-14 22:13:20 UTC); it moves
    /// only with `advance(by:)`, like the loop's clock, so pasteboard expiry and registration
    /// times are the same at every run.
    public static let wallClockStart: Int64 = 1_700_000_000_000

    /// The daemon's built-in defaults (deadlines, background policy, limits), with no apps
    /// folders to read and no desktop entries (the machine's are not the test's: set
    /// `desktopEntries.enabled` and give a `desktopEnvironment` with private XDG folders).
    public static var defaultConfiguration: DaemonConfiguration {
        var configuration = DaemonConfiguration(appsFolders: [])
        configuration.watchAppsFolders = false
        configuration.desktopEntries.enabled = false
        configuration.allowDebugStall = false
        return configuration
    }

    /// Its blocking work (bundle reads, password hashes, the desktop layout's reads) runs on
    /// `loop` too, as later tasks, so `settle()` finishes it and no other thread touches the
    /// loop; its wall clock starts at `wallClockStart`; `passwordHasher` stands in for
    /// Argon2id when given. The desktop entries (with `desktopEntries.enabled`) are read with
    /// `desktopEnvironment` (`XDG_*`, `HOME`, `PATH`, `XDG_CURRENT_DESKTOP`), as the daemon
    /// reads them with its own: the first read starts here and is in once the daemon has
    /// settled; the folders' watcher is one the test triggers (`desktopFoldersChanged()`).
    public init(configuration: DaemonConfiguration = InProcessDaemon.defaultConfiguration, apps: [AppBundle] = [], passwordHasher: (any PasswordHasher)? = nil,
                desktopEnvironment: [String: String] = [:]) {
        launcher = SimulatedLauncher(loop: loop)
        let desktopLauncher = SimulatedDesktopLauncher(loop: loop)
        self.desktopLauncher = desktopLauncher
        let lines = self.lines
        let watchers = self.watchers
        let desktopWatchers = self.desktopWatchers
        let logger = Logger(label: "launchservicesd.in-process") { _ in RecordingLogHandler(lines: lines) }
        daemon = LaunchServicesDaemon(configuration: configuration, socketPath: "/in-process/launchservicesd.socket", stateFolder: nil,
                                      activatedSocket: nil, launcher: launcher, loop: loop, logger: logger,
                                      workers: .onLoop(loop, hasher: passwordHasher, wallClockStart: Self.wallClockStart,
                                                       folderWatcher: { onChange in
                                                           let watcher = TriggeredFolderWatcher(onChange: onChange)
                                                           watchers.withLockedValue { $0.append(watcher) }
                                                           return watcher
                                                       },
                                                       desktopWatcher: { onChange in
                                                           let watcher = TriggeredFolderWatcher(onChange: onChange)
                                                           desktopWatchers.withLockedValue { $0.append(watcher) }
                                                           return watcher
                                                       },
                                                       environment: desktopEnvironment,
                                                       desktopLaunchers: { _, _, _, _, _ in DesktopLaunchers(launcher: desktopLauncher, activator: nil) }))
        // Registered together, as one folder scan would: they share a time, ties by id.
        daemon.registerInMemory(apps)
        daemon.startDesktopEntries()
    }

    // MARK: Apps

    /// Every desktop launch asked for so far, in order (no process is started: desktop apps
    /// are simulated, each answered `running` unless `answerDesktopLaunches` says otherwise).
    public var desktopLaunches: [DesktopLaunchRequest] { desktopLauncher.launches }

    /// What launches of desktop entry `id` answer from now on.
    public func answerDesktopLaunches(of id: String, with outcome: DesktopLaunchOutcome) {
        desktopLauncher.answer(id, with: outcome)
    }

    public func register(_ app: AppBundle) {
        daemon.registerInMemory([app])
    }

    /// The user's default handler for a scheme (as `lsctl default` sets it).
    public func setDefault(_ app: String?, for scheme: String) throws {
        daemon.setDefaultInMemory(app, for: try URLScheme(validating: scheme))
    }

    /// Changes how `app` behaves: its next launches, and its running process if it has one.
    public func behave(_ app: String, _ change: (inout SimulatedBehaviour) -> Void) {
        var behaviour = launcher.behaviours[app] ?? SimulatedBehaviour()
        change(&behaviour)
        launcher.behaviours[app] = behaviour
        if let running = self.app(app), running.isAlive { running.behaviour = behaviour }
    }

    /// Makes the next launch of `app` fail with `reason` (a missing executable, say); the
    /// launches after it succeed again. Called repeatedly, fails that many launches in turn.
    /// (`SimulatedBehaviour.launchFailure` fails every launch.)
    public func failNextLaunch(of app: String, reason: String) {
        launcher.failures[app, default: []].append(reason)
    }

    /// Reads the configured apps folders (`appsFolders`) and registers what they hold, as
    /// the daemon does at start; then, with `watchAppsFolders`, watches them
    /// (`appsFoldersChanged()`).
    public func loadAppsFolders() throws {
        try daemon.loadAppsFoldersInMemory()
        settle()
    }

    /// Something changed in the apps folders, as inotify would say (with `watchAppsFolders`,
    /// after `loadAppsFolders()`): the daemon rescans them 200 ms later on its clock
    /// (`advance(by:)`).
    public func appsFoldersChanged() {
        for watcher in watchers.withLockedValue({ $0 }) { watcher.trigger() }
        settle()
    }

    // MARK: Desktop entries

    /// Something changed in the desktop folders, as inotify would say (with
    /// `desktopEntries.watch`): the daemon reads them again 200 ms later on its clock
    /// (`advance(by:)`).
    public func desktopFoldersChanged() {
        for watcher in desktopWatchers.withLockedValue({ $0 }) { watcher.trigger() }
        settle()
    }

    /// The folders the daemon last asked to watch for desktop entries (empty without a watch,
    /// and once the watch is cancelled).
    public var desktopWatchedFolders: [String] {
        guard let watcher = desktopWatchers.withLockedValue({ $0.last }), !watcher.isCancelled else { return [] }
        return watcher.watched
    }

    /// The desktop-entries room (`isReady`, `handlers`, `chosen(forScheme:)`, `generation`, …).
    package var desktopEntries: DesktopService { daemon.desktopEntries }

    /// The desktop file ID chosen for `scheme`, if any, in the layout last read.
    public func desktopHandler(forScheme scheme: String) -> String? { daemon.desktopEntries.chosen(forScheme: scheme)?.id }
    /// When the registry says the desktop side first handled `scheme` (milliseconds since the
    /// Unix epoch on the daemon's wall clock); nil when no desktop entry handles it.
    public func desktopClaim(on scheme: String) throws -> Int64? { daemon.desktopClaim(on: try URLScheme(validating: scheme)) }

    /// The latest process of `app`, alive or not.
    public func app(_ id: String) -> SimulatedApp? {
        launcher.launched.last { $0.bundleID == id }
    }

    /// How many times `app` was launched.
    public func launches(of id: String) -> Int {
        launcher.launched.filter { $0.bundleID == id }.count
    }

    public func state(of app: String) -> AppState { daemon.state(of: app) }
    public var frontmost: String? { daemon.frontmostApp }
    /// Opens delivered to `app` and not yet answered (at most `maximumOpensInFlightPerApp`).
    public func opensInFlight(of app: String) -> Int { daemon.opensInFlight(of: app) }
    /// What the daemon logged, one `level: message` line each.
    public var log: [String] { lines.withLockedValue { $0 } }

    // MARK: Clients

    /// A new peer, greeted unless `greet` is false (as the user's tool, unless `pid` is one
    /// of the apps').
    public func connect(pid: Int32? = nil, greet: Bool = true) -> InProcessClient {
        let channel = EmbeddedChannel(loop: loop)
        let client = InProcessClient(channel: channel, daemon: self)
        let peer = PeerCredentials(pid: pid ?? getppid(), uid: getuid())
        _ = daemon.serve(channel, peer: peer)
        _ = channel.connect(to: try! SocketAddress(unixDomainSocketPath: "/in-process/client"))
        if greet { client.greet() }
        return client
    }

    // MARK: Time

    /// Runs everything that is ready: the daemon's work, and the apps' answers to it,
    /// until nothing moves.
    public func settle() {
        var rounds = 0
        repeat {
            loop.run()
            rounds += 1
        } while launcher.launched.reduce(false, { $1.step() || $0 }) && rounds < 100_000
        loop.run()
    }

    /// Moves the clock forward, firing the timers that fall due (in order, letting the apps
    /// answer after each), then settles.
    public func advance(by amount: TimeAmount, step: TimeAmount = .milliseconds(100)) {
        var left = amount
        while left > .zero {
            let next = min(step, left)
            loop.advanceTime(by: next)
            settle()
            left = left - next
        }
    }

    // MARK: Stopping

    /// Stops the daemon as SIGTERM would; true once every app has exited (advance the
    /// clock past the shutdown grace to see stragglers killed).
    @discardableResult
    public func shutdown() -> Bool {
        let finished = NIOLockedValueBox(false)
        daemon.beginShutdown().whenComplete { _ in finished.withLockedValue { $0 = true } }
        settle()
        return finished.withLockedValue { $0 }
    }

    /// Whether every app the daemon started has exited.
    public var allAppsExited: Bool { launcher.launched.allSatisfy { !$0.isAlive } }
}

extension AppBundle {
    /// A bundle for a simulated app: no files behind it.
    public static func simulated(_ id: String, schemes: [String], queries: [String] = []) -> AppBundle {
        AppBundle(id: id, name: id, path: "/simulated/\(id).app", executable: id,
                  schemes: schemes.compactMap { try? URLScheme(validating: $0) },
                  queriesSchemes: Set(queries.compactMap { try? URLScheme(validating: $0) }))
    }
}
