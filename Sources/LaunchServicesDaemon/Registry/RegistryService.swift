import Dispatch
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Owns the registry and where it is kept: the in-memory `Registry`, the database, which
/// bundles came from the apps folders (withdrawn when they leave) and which were registered
/// by hand, the bundles refused, and the watch on the apps folders. Files are read and the
/// database is written on `files`, never on the loop; the registry itself lives on the loop.
final class RegistryService {
    /// What `read` found, to be applied on the loop.
    struct Loaded: Sendable {
        var store: RegistryStore?
        var manual: [RegistryStore.Registration]
        /// Folder bundles keep the time saved for them; those new to the database share the
        /// time of this scan.
        var fromFolders: [RegistryStore.Registration]
        var defaults: [URLScheme: String]
        var refused: [BundleError]
        /// What the scan could not read: the saved folder apps from there were kept as saved.
        var unreadable: [UnreadablePath] = []
        /// When the desktop side first claimed each scheme (RegistryService+DesktopClaims.swift).
        var desktopClaims: [URLScheme: Int64] = [:]
    }

    let loop: EventLoop
    let logger: Logger
    let folders: [String]
    let watchFolders: Bool
    /// Where files are read and the database written, in order, off the loop.
    let files: WorkQueue
    /// Milliseconds since the Unix epoch, for registration times (the testing kit moves it).
    let wallClock: @Sendable () -> Int64
    private(set) var registry = Registry()
    private(set) var store: RegistryStore?
    /// When the desktop side first claimed each scheme it handles (milliseconds since the
    /// Unix epoch), as saved (RegistryService+DesktopClaims.swift).
    var desktopClaims: [URLScheme: Int64] = [:]
    var sources: [String: RegistryStore.Source] = [:]
    /// Bundles refused at the last scan, for `lsctl status`.
    var refused: [BundleError] = []
    /// What the last scan could not read, for `lsctl status` (`RegistryService+Rescan`).
    var unreadable: [UnreadablePath] = []
    var watcher: (any FolderWatching)?
    /// Makes the apps folders' watcher, given what to call on a change (`DaemonWorkers`).
    let makeWatcher: FolderWatching.Maker
    var pendingRescan: Scheduled<Void>?
    /// The retry of a scan that could not read everything, and the wait before the next one.
    var pendingRetry: Scheduled<Void>?
    var retryDelay = RegistryService.firstRetryDelay
    /// The last rescan's save of the folder registrations failed: the next one saves.
    var folderAppsUnsaved = false
    var stopped = false
    /// The last registration time handed out (`issueTime`), so times only grow.
    private var lastIssued: Int64 = 0

    init(loop: EventLoop, logger: Logger, folders: [String], watchFolders: Bool, files: WorkQueue,
         wallClock: @escaping @Sendable () -> Int64 = { RegistryStore.millisecondsNow() }, makeWatcher: @escaping FolderWatching.Maker = { _ in nil }) {
        self.loop = loop
        self.makeWatcher = makeWatcher
        self.files = files
        self.wallClock = wallClock
        self.logger = logger
        self.folders = folders
        self.watchFolders = watchFolders
    }

    /// Reads the registry (blocking: call it off the loop): what `lsctl register` added and
    /// the user's defaults from the database, then the apps folders (`scan`: the system's,
    /// unless a test stands in). A folder bundle whose id was registered by hand from another
    /// path is refused. A saved folder app in a folder or bundle the scan could not read now
    /// stays as saved (`ScanCoverage`).
    static func read(stateFolder: String?, folders: [String], now: Int64 = RegistryStore.millisecondsNow(),
                     scan scanFolders: ([String]) -> BundleLoader.ScanResult = BundleLoader.scan) throws -> Loaded {
        var stored: [RegistryStore.Stored] = []
        var defaults: [URLScheme: String] = [:]
        var store: RegistryStore?
        var desktopClaims: [URLScheme: Int64] = [:]
        if let stateFolder {
            let opened = try RegistryStore(folder: stateFolder)
            (stored, defaults) = try opened.load()
            desktopClaims = try opened.desktopClaims()
            store = opened
        }
        // One pass over what was saved (10,000 apps at a large start: each copy of the list
        // costs a retain per field of every app).
        var manual: [RegistryStore.Registration] = []
        var saved: [RegistryStore.Registration] = []
        var manualPaths: [String: String] = [:]
        var folderTimes: [String: Int64] = [:]
        var latest: Int64 = 0
        manual.reserveCapacity(stored.count)
        for entry in stored {
            latest = max(latest, entry.registeredAt)
            switch entry.source {
            case .manual:
                manual.append((entry.app, entry.registeredAt))
                if manualPaths[entry.app.id] == nil { manualPaths[entry.app.id] = entry.app.path }
            case .folder:
                saved.append((entry.app, entry.registeredAt))
                if folderTimes[entry.app.id] == nil { folderTimes[entry.app.id] = entry.registeredAt }
            }
        }
        stored = []
        // Bundles that arrived while the daemon was not running: registered now, after every
        // stored registration even if the clock went back.
        let scanTime = max(now, latest + 1)
        let scan = scanFolders(folders)
        var refused = scan.errors
        var fromFolders: [RegistryStore.Registration] = []
        // Saved where the scan could not look: kept as saved, unless found where it was.
        var held: [String: RegistryStore.Registration] = [:]
        if !scan.coverage.isComplete {
            for entry in saved where !scan.coverage.sawGone(bundleAt: entry.app.path) { held[entry.app.id] = entry }
        }
        for bundle in scan.bundles {
            if let path = manualPaths[bundle.id] {
                if path != bundle.path { refused.append(Self.alreadyRegistered(bundle, from: path)) }
                continue
            }
            // The same id found elsewhere: which one it is, a complete scan decides.
            if let kept = held[bundle.id], kept.app.path != bundle.path { continue }
            held[bundle.id] = nil
            fromFolders.append((bundle, folderTimes[bundle.id] ?? scanTime))
        }
        fromFolders += held.values
        // Written only when the folders changed while the daemon was away: at an ordinary
        // start the saved folder registrations are what the scan found, and rewriting them
        // would read the whole database (10,000 apps: most of the start).
        if !Self.same(saved, fromFolders) { try store?.replaceFolderApps(fromFolders) }
        return Loaded(store: store, manual: manual, fromFolders: fromFolders, defaults: defaults, refused: refused,
                      unreadable: scan.coverage.unreadable, desktopClaims: desktopClaims)
    }

    /// Whether two sets of registrations hold the same apps with the same times, in any order.
    static func same(_ a: [RegistryStore.Registration], _ b: [RegistryStore.Registration]) -> Bool {
        guard a.count == b.count else { return false }
        var times: [AppBundle: Int64] = [:]
        for (app, time) in a { times[app] = time }
        return times.count == a.count && b.allSatisfy { times[$0.app] == $0.registeredAt }
    }

    static func alreadyRegistered(_ bundle: AppBundle, from path: String) -> BundleError {
        BundleError(path: bundle.path, key: "CFBundleIdentifier", problem: "'\(bundle.id)' is already registered from \(path) (lsctl register); unregister that first",
                    declaredSchemes: bundle.schemes)
    }

    /// Takes what `read` found, on the loop, and starts watching the folders.
    func apply(_ loaded: Loaded) {
        loop.assertInEventLoop()
        store = loaded.store
        // The bulk load, in one pass (nothing to warn about one by one; the contenders are
        // named below, once). Folder registrations come second, as `register` would take them.
        if registry.apps.isEmpty {
            registry = Registry(loading: [loaded.manual, loaded.fromFolders].joined())
        } else {
            for (app, time) in loaded.manual + loaded.fromFolders { registry.register(app, at: time) }
        }
        sources.reserveCapacity(registry.apps.count)
        for (app, _) in loaded.manual { sources[app.id] = .manual }
        for (app, _) in loaded.fromFolders { sources[app.id] = .folder }
        for (scheme, id) in loaded.defaults { registry.setDefault(id, for: scheme) }
        desktopClaims = loaded.desktopClaims
        lastIssued = max(lastIssued, registry.registeredAt.values.max() ?? 0, desktopClaims.values.max() ?? 0)
        // Every scheme claimed by several apps with no default chosen: each contender is named.
        // Only the contested schemes are sorted and looked at, not every scheme.
        let contested = registry.claimants.compactMap { $0.value.count > 1 && registry.defaults[$0.key] == nil ? $0.key : nil }
        for scheme in contested.sorted() {
            for claim in registry.claims(on: scheme).dropFirst() { warnContender(claim.app, scheme) }
        }
        refused = loaded.refused
        for error in refused {
            logger.warning("bundle refused: \(error)", metadata: ["bundle_path": "\(TerminalText.escapingControls(error.path))"])
        }
        startWatching()
        noteCoverage(loaded.unreadable)
        logger.info("registry loaded: \(registry.apps.count) apps (\(loaded.manual.count) registered by hand), \(registry.claimants.count) schemes, \(loaded.defaults.count) defaults, \(refused.count) refused\(loaded.unreadable.isEmpty ? "" : ", \(loaded.unreadable.count) could not be read")")
    }

    // MARK: Changes (in memory; the caller saved them first, see `persist`)

    /// A new registration time: the wall clock in milliseconds since the Unix epoch, and
    /// always later than the last one handed out (two registrations never share a time,
    /// unless they come from one scan, and a clock set back does not reorder them).
    func issueTime() -> Int64 {
        lastIssued = max(wallClock(), lastIssued + 1)
        return lastIssued
    }

    /// When an app still registered was registered.
    func registeredAt(_ id: String) -> Int64? { registry.registeredAt[id] }

    /// Registers `app` at `time` (an app still registered keeps its own time, see
    /// `Registry.register`). A scheme the app claims anew that stays with another app is
    /// logged (`warn`), so a newcomer's claim is never silently lost nor silently won.
    /// Returns the schemes the app claims anew, each with the app that opened it before,
    /// for a caller that warns later (`warn` false).
    @discardableResult
    func register(_ app: AppBundle, source: RegistryStore.Source, at time: Int64, warn: Bool = true) -> [NewClaim] {
        let before = Set(registry.apps[app.id]?.schemes ?? [])
        let claimed = app.schemes.filter { !before.contains($0) }.map { NewClaim(scheme: $0, previousHolder: registry.handler(for: $0)?.id) }
        registry.register(app, at: time)
        sources[app.id] = source
        if warn { warnIfContended(app.id, claimed) }
        return claimed
    }

    /// A scheme an app claims anew, and the app that opened it until then.
    struct NewClaim {
        var scheme: URLScheme
        var previousHolder: String?
    }

    /// Warns for each scheme `id` claims anew but that opens in another app; and, for an app
    /// registered earlier that now claims a scheme another app held (its bundle changed and
    /// kept its time), that the scheme moved.
    func warnIfContended(_ id: String, _ claims: [NewClaim]) {
        for claim in claims {
            let holder = registry.handler(for: claim.scheme)?.id
            if holder == id, let desktopSince = desktopClaims[claim.scheme], registry.defaults[claim.scheme] != id,
               desktopSince < registry.registeredAt[id] ?? .max {
                // Kept by the desktop side, which claimed it first (`SchemeResolution`).
                logger.warning("\(id) claims '\(claim.scheme)', which desktop entries have opened since \(ClaimTime.iso8601(desktopSince)); the desktop entry chosen for it keeps opening it (lsctl explain \(claim.scheme):); lsctl default \(claim.scheme) \(id) to change",
                               metadata: ["bundle_id": "\(id)", "url_scheme": "\(claim.scheme)"])
            } else if holder != id {
                warnContender(id, claim.scheme)
            } else if let previous = claim.previousHolder, previous != id, registry.apps[previous] != nil,
                      registry.registeredAt[previous] != registry.registeredAt[id] {
                let since = registry.registeredAt[id].map(ClaimTime.iso8601) ?? "?"
                logger.warning("\(id) now claims '\(claim.scheme)', held by \(previous) until now; \(id) was registered earlier (since \(since)) and opens it from now on; lsctl default \(claim.scheme) \(previous) to change",
                               metadata: ["bundle_id": "\(id)", "url_scheme": "\(claim.scheme)"])
            }
        }
    }

    /// Logs that `id` claims `scheme` but another app keeps opening it.
    private func warnContender(_ id: String, _ scheme: URLScheme) {
        guard let holder = registry.resolve(scheme), holder.app.id != id else { return }
        let since = registry.registeredAt[holder.app.id].map(ClaimTime.iso8601) ?? "?"
        let why = holder.reason == .userDefault ? " (the user's default)" : ""
        logger.warning("\(id) claims '\(scheme)', held by \(holder.app.id)\(why) since \(since); \(holder.app.id) keeps opening it; lsctl default \(scheme) \(id) to change",
                       metadata: ["bundle_id": "\(id)", "url_scheme": "\(scheme)"])
    }

    /// Withdraws an app; returns where its registration came from.
    @discardableResult
    func unregister(_ id: String) -> RegistryStore.Source? {
        registry.unregister(id)
        return sources.removeValue(forKey: id)
    }

    func setDefault(_ id: String?, for scheme: URLScheme) {
        registry.setDefault(id, for: scheme)
    }

    func isRegisteredByHand(_ id: String) -> Bool { sources[id] == .manual }

    /// Runs a database write on `files`, then `done` on the loop with its error, if any.
    /// With no database (no state folder) the write is skipped and `done` runs at once.
    func persist(_ write: @escaping @Sendable (RegistryStore) throws -> Void, then done: @escaping (Error?) -> Void) {
        guard let store else { return done(nil) }
        let loop = self.loop
        let finish = NIOLoopBound(done, eventLoop: loop)
        files.async {
            let error: Error?
            do { try write(store); error = nil } catch let failure { error = failure }
            loop.execute { finish.value(error) }
        }
    }

    /// Stops watching and rescanning.
    func stop() {
        stopped = true
        watcher?.cancel()
        pendingRescan?.cancel()
        pendingRetry?.cancel()
    }
}
