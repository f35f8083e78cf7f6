import CLaunchServicesShim
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
    /// What `read` found, to be applied on the loop: the registrations, and the in-memory
    /// registry built from them off the loop (`RegistryService+Start`).
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
        /// `manual` then `fromFolders` in one `Registry`, the defaults set.
        var registry = Registry()
        var sources: [String: RegistryStore.Source] = [:]
        /// The latest registration or desktop claim time.
        var latest: Int64 = 0
        /// The schemes several apps claim with no default chosen, sorted.
        var contested: [URLScheme] = []
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
    /// What the start read, until `finishLoading` reads the rest.
    private var pendingLoad: Started?
    /// The saved counts, answered while the rest of the registry loads.
    private var countsWhileLoading: RegistryStore.Counts?
    /// Requests held while the registry loads (`ConnectionService.received`).
    let loadGate = RegistryLoadGate()
    /// The apps folders are watched (from `begin`, or from `apply`).
    var watching = false
    /// Apps registered by hand from which the load's free memory is given back (`finishedLoading`).
    static let trimAfterLoading = 1_000
    /// Rescans asked for while the registry loads: one scan answers them once it is in.
    /// Bounded by what asks: `lsctl rescan` waits in the load gate (at most 4,096), the
    /// folder watch asks at most once per 200 ms, and a load lasts about a second at most.
    var rescansAfterLoad: [(RescanSummary) -> Void] = []
    /// The registry holds only schemes read ahead of the load (`readAhead`), not yet the whole.
    var readAheadInMemory = false
    /// The desktop side's claims, checked once the registry is in (`whenLoaded`).
    private var desktopCheckAfterLoad: (() -> Void)?

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

    /// Takes what the start read before serving (`start`), on the loop: the store, the
    /// refused bundles and the counts that `lsctl status` shows until the rest is in. Without
    /// a state folder there is nothing more to read, and `loaded` is taken in at once.
    func begin(_ started: Started, loaded: Loaded?) {
        loop.assertInEventLoop()
        store = started.store
        refused = started.refused
        for error in refused {
            logger.warning("bundle refused: \(error)", metadata: ["bundle_path": "\(TerminalText.escapingControls(error.path))"])
        }
        if let loaded { return apply(loaded, refusalsLogged: true) }
        countsWhileLoading = started.counts
        pendingLoad = started
        loadGate.close()
        loadGate.readAhead = { [unowned self] scheme in readAhead(scheme) }
        // Watched from the scan on, as before the split: a change after the first answer is
        // never missed. A rescan it causes reads on `files` after the load (`rescan`).
        startWatching()
        noteCoverage(started.unreadable)
    }

    /// Reads the rest of the registry on `files` (the apps registered by hand, the defaults,
    /// the desktop claims; the in-memory registry built there too), then takes it in on the
    /// loop and answers the requests held meanwhile (`loadGate`), in the order they came.
    /// Called once the socket serves; does nothing when `begin` had everything.
    func finishLoading() {
        loop.assertInEventLoop()
        guard let started = pendingLoad else { return }
        pendingLoad = nil
        let loop = self.loop
        let service = NIOLoopBound(self, eventLoop: loop)
        RegistryService.finish(started, inPartsOn: files) { result in
            loop.execute { service.value.finishedLoading(result, started) }
        }
    }

    private func finishedLoading(_ result: Result<Loaded, any Error>, _ started: Started) {
        let loaded: Loaded
        switch result {
        case .success(let read): loaded = read
        case .failure(let error):
            // The file was checked and counted a moment ago; should its rows still fail to
            // read, the apps folders' apps serve and the failure is named.
            // The next start checks the file in full (`CleanClose`), and sets it aside if damaged.
            started.store?.distrustCleanClose()
            logger.error("could not read the apps registered by hand, the defaults and the desktop claims: \(error); serving the apps folders' apps only until launchservicesd restarts, which checks \(started.store?.file ?? "registry.sqlite") in full")
            loaded = RegistryService.built(Loaded(store: started.store, manual: [], fromFolders: started.fromFolders, defaults: [:],
                                                  refused: started.refused, unreadable: started.unreadable))
        }
        countsWhileLoading = nil
        loadGate.readAhead = nil
        if stopped {
            loadGate.discard()
            return
        }
        // Only the schemes read ahead are in memory: the whole registry replaces them.
        if readAheadInMemory {
            registry = Registry()
            sources = [:]
            readAheadInMemory = false
        }
        apply(loaded, refusalsLogged: true)
        if !rescansAfterLoad.isEmpty {
            let waiting = rescansAfterLoad
            rescansAfterLoad = []
            rescan { summary in for done in waiting { done(summary) } }
        }
        if let saved = started.counts, saved != counts {
            // An earlier version wrote to the file since the index was built: rebuilt, so the
            // next start's counts are right again (the registry itself came from the app rows).
            logger.notice("registry.sqlite's claim index counted \(saved.apps) apps and \(saved.schemes) schemes, but holds \(counts.apps) and \(counts.schemes): an earlier launchservicesd wrote to it; rebuilding the index")
            persist({ try $0.rebuildClaimIndex() }) { [logger] error in
                if let error { logger.warning("could not rebuild the claim index: \(error); lsctl status may count wrongly at the next start, until the registry is in") }
            }
        }
        // What reading every row left free (row buffers, the lists the registry was built
        // from) goes back to the system, off the loop: the daemon's memory is then the
        // registry's. Only after a large load: the trim walks every malloc arena, holding
        // each one's lock, which a small registry's few pages are not worth.
        guard loaded.manual.count >= Self.trimAfterLoading else { return }
        files.async { [store] in
            store?.releaseCachedPages()
            _ = ls_return_free_memory()
        }
    }

    /// Takes in one scheme's part of the registry, read ahead of the load (`readAhead`), and
    /// answers what waited for it alone. After the load it is not needed (the load's own
    /// answer follows it on the loop, so this one comes first or not at all).
    func takeReadAhead(_ preview: RegistryStore.SchemePreview) {
        loop.assertInEventLoop()
        guard isLoading, !stopped else { return }
        preview.add(to: &registry, desktopClaims: &desktopClaims, sources: &sources)
        readAheadInMemory = true
        logger.info("registry loading: '\(preview.scheme)' read ahead (\(preview.apps.count) apps); answering the requests that wait for it alone")
        loadGate.previewedScheme(preview.scheme)
    }

    /// Takes what `read` found, on the loop, and starts watching the folders.
    func apply(_ loaded: Loaded, refusalsLogged: Bool = false) {
        loop.assertInEventLoop()
        store = loaded.store
        // The bulk load, built off the loop (`finish`): nothing to warn about one by one; the
        // contenders are named below, once. Folder registrations come second, as `register`
        // would take them.
        let contested: [URLScheme]
        if registry.apps.isEmpty {
            registry = loaded.registry
            sources = loaded.sources
            lastIssued = max(lastIssued, loaded.latest)
            contested = loaded.contested
        } else {
            for (app, time) in loaded.manual + loaded.fromFolders { registry.register(app, at: time) }
            for (app, _) in loaded.manual { sources[app.id] = .manual }
            for (app, _) in loaded.fromFolders { sources[app.id] = .folder }
            for (scheme, id) in loaded.defaults { registry.setDefault(id, for: scheme) }
            lastIssued = max(lastIssued, registry.registeredAt.values.max() ?? 0, loaded.desktopClaims.values.max() ?? 0)
            // Every scheme claimed by several apps with no default chosen: each contender is named.
            contested = registry.claimants.compactMap { $0.value.count > 1 && registry.defaults[$0.key] == nil ? $0.key : nil }.sorted()
        }
        desktopClaims = loaded.desktopClaims
        for scheme in contested {
            for claim in registry.claims(on: scheme).dropFirst() { warnContender(claim.app, scheme) }
        }
        refused = loaded.refused
        if !refusalsLogged {
            for error in refused {
                logger.warning("bundle refused: \(error)", metadata: ["bundle_path": "\(TerminalText.escapingControls(error.path))"])
            }
        }
        if !watching {
            startWatching()
            noteCoverage(loaded.unreadable)
        }
        let waiting = loadGate.heldCount
        logger.info("registry loaded: \(registry.apps.count) apps (\(loaded.manual.count) registered by hand), \(registry.claimants.count) schemes, \(loaded.defaults.count) defaults, \(refused.count) refused\(loaded.unreadable.isEmpty ? "" : ", \(loaded.unreadable.count) could not be read")\(waiting > 0 ? "; answering the \(waiting) requests that waited for it" : "")")
        loadGate.open()
        desktopCheckAfterLoad?()
        desktopCheckAfterLoad = nil
    }

    /// The rest of the registry is still being read after the socket serves.
    var isLoading: Bool { countsWhileLoading != nil }

    /// How many apps are registered and how many schemes they claim (`lsctl status`): as
    /// saved while the rest of the registry loads, then as in memory.
    var counts: RegistryStore.Counts {
        countsWhileLoading ?? RegistryStore.Counts(apps: registry.apps.count, schemes: registry.claimants.count)
    }

    /// Runs `check` now, or once the registry is in (only the last one asked for: each reads
    /// the desktop side as it is then).
    func whenLoaded(_ check: @escaping () -> Void) {
        if pendingLoad == nil && countsWhileLoading == nil { return check() }
        desktopCheckAfterLoad = check
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
