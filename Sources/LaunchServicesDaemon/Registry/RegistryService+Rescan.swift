import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore

/// Rescanning the apps folders: on a change the watch reports, on `lsctl rescan`, and again
/// after a scan that could not read everything.
///
/// A scan that could not read a folder or a bundle right now (the descriptor limit, an I/O
/// error: `ReadFailure`) is incomplete: what was registered from there stays as it was, with
/// its registration time, in memory and in the database; a warning names the folder or the
/// bundle and the system's reason; and the folders are read again after `retryDelay`
/// (1 s, doubling up to a minute, for as long as a scan stays incomplete), or at the next
/// change or `lsctl rescan`, whichever comes first.
extension RegistryService {
    static let firstRetryDelay: Int64 = 1
    static let longestRetryDelay: Int64 = 60

    /// Watches the apps folders; a change schedules one rescan 200 ms later (a burst of
    /// file events, such as copying a bundle in, becomes one rescan).
    /// The watcher is the daemon's `DaemonWorkers.folderWatcher` (inotify on the `files`
    /// thread; the testing kit's is triggered by the test).
    func startWatching() {
        watching = true
        guard watchFolders else { return }
        let loop = self.loop
        let service = NIOLoopBound(self, eventLoop: loop)
        let watcher = makeWatcher {
            loop.execute {
                let self_ = service.value
                guard self_.pendingRescan == nil, !self_.stopped else { return }
                self_.pendingRescan = loop.scheduleTask(in: .milliseconds(200)) {
                    service.value.pendingRescan = nil
                    service.value.rescan { _ in }
                }
            }
        }
        watcher?.watch(folders)
        self.watcher = watcher
    }

    /// Re-reads the apps folders (off the loop) and applies the difference: new and changed
    /// bundles are registered, bundles gone from the folders are withdrawn. Registrations
    /// made with `lsctl register` are not touched, nor anything the scan could not read.
    /// `done` gets a summary, on the loop.
    func rescan(_ done: @escaping (RescanSummary) -> Void) {
        // A change seen before the socket served: the registry's load starts now. It reads on
        // `files` in parts, between which this scan could run and be applied to half a
        // registry (or to the schemes read ahead, which the whole one replaces): it waits
        // for the load, and one scan then answers every rescan asked meanwhile.
        finishLoading()
        if isLoading {
            rescansAfterLoad.append(done)
            return
        }
        let folders = self.folders
        let loop = self.loop
        let finish = NIOLoopBound((self, done), eventLoop: loop)
        files.async {
            let scan = BundleLoader.scan(folders: folders)
            loop.execute {
                let (service, done) = finish.value
                done(service.applyRescan(scan))
            }
        }
    }

    func applyRescan(_ scan: BundleLoader.ScanResult) -> RescanSummary {
        var summary = RescanSummary()
        var errors = scan.errors
        let coverage = scan.coverage
        let scanned = Dictionary(scan.bundles.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for (id, source) in sources where source == .folder && scanned[id] == nil {
            // Where the scan could not look, the app stays as it was.
            if let app = registry.apps[id], !coverage.sawGone(bundleAt: app.path) { continue }
            unregister(id)
            summary.removed.append(id)
        }
        // Bundles new to the registry in this scan share one time.
        var scanTime: Int64?
        // Warned once the whole scan is registered: two newcomers of one scan tie by id.
        var claimed: [(String, [NewClaim])] = []
        for bundle in scan.bundles {
            if sources[bundle.id] == .manual {
                if let path = registry.apps[bundle.id]?.path, path != bundle.path {
                    errors.append(Self.alreadyRegistered(bundle, from: path))
                }
                continue
            }
            // Registered from a place the scan could not read and found elsewhere under the
            // same id: which of the two it is, a complete scan decides.
            if let current = registry.apps[bundle.id], current.path != bundle.path, !coverage.sawGone(bundleAt: current.path) { continue }
            if registry.apps[bundle.id] != bundle {
                if registry.apps[bundle.id] == nil {
                    summary.added.append(bundle.id)
                } else {
                    summary.changed.append(bundle.id)
                }
                if scanTime == nil { scanTime = issueTime() }
                claimed.append((bundle.id, register(bundle, source: .folder, at: scanTime!, warn: false)))
            }
        }
        for (id, claims) in claimed { warnIfContended(id, claims) }
        // Saved only when something changed (or the last save failed): an incomplete scan,
        // retried every few seconds at the descriptor limit, writes nothing.
        if !summary.added.isEmpty || !summary.changed.isEmpty || !summary.removed.isEmpty || folderAppsUnsaved {
            let saved: [RegistryStore.Registration] = sources.compactMap { id, source in
                guard source == .folder, let app = registry.apps[id], let time = registry.registeredAt[id] else { return nil }
                return (app, time)
            }
            persist({ try $0.replaceFolderApps(saved) }) { [self] error in
                folderAppsUnsaved = error != nil
                if let error { logger.error("could not save the rescanned registry: \(error)") }
            }
        }
        // A refusal in a place the scan could not read still stands (`lsctl explain`).
        errors += refused.filter { old in !coverage.sawGone(bundleAt: old.path) && !errors.contains { $0.path == old.path } }
        // Logged as at start, each refusal once: a bundle still refused for the same reason
        // at the next rescan is not logged again (`lsctl status` lists them all).
        let known = Set(refused.map(\.description))
        for error in errors where !known.contains(error.description) {
            logger.warning("bundle refused: \(error)", metadata: ["bundle_path": "\(TerminalText.escapingControls(error.path))"])
        }
        refused = errors
        summary.refused = errors.map(\.description)
        summary.unreadable = coverage.unreadable.map(\.description)
        watcher?.watch(folders)
        if !summary.added.isEmpty || !summary.changed.isEmpty || !summary.removed.isEmpty {
            logger.notice("apps folders rescanned: \(summary.added.count) added, \(summary.changed.count) changed, \(summary.removed.count) removed, \(errors.count) refused\(coverage.isComplete ? "" : ", \(coverage.unreadable.count) could not be read")")
        }
        noteCoverage(coverage.unreadable)
        return summary
    }

    /// Takes note of what a scan could not read: each folder or bundle newly unreadable (or
    /// unreadable for another reason) is logged, and the folders are read again later; a
    /// complete scan after an incomplete one says so and stops the retries.
    func noteCoverage(_ now: [UnreadablePath]) {
        let before = Set(unreadable.map(\.description))
        unreadable = now
        guard !now.isEmpty else {
            pendingRetry?.cancel()
            pendingRetry = nil
            retryDelay = Self.firstRetryDelay
            if !before.isEmpty { logger.notice("apps folders read in full again; what could not be read before is up to date") }
            return
        }
        let delay = scheduleRetry()
        for place in now where !before.contains(place.description) {
            logger.warning("\(place): nothing registered from it is withdrawn or changed; the apps folders are read again \(delay.map { "in \($0) s" } ?? "shortly"), at the next change in them, or on lsctl rescan",
                           metadata: [place.kind == .appsFolder ? "apps_folder" : "bundle_path": "\(TerminalText.escapingControls(place.path))"])
        }
    }

    /// Schedules the next read of the folders after an incomplete scan, unless one is due;
    /// returns its delay in seconds (nil when one was already due).
    private func scheduleRetry() -> Int64? {
        guard pendingRetry == nil, !stopped else { return nil }
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
        let service = NIOLoopBound(self, eventLoop: loop)
        pendingRetry = loop.scheduleTask(in: .seconds(delay)) {
            service.value.pendingRetry = nil
            service.value.rescan { _ in }
        }
        return delay
    }
}
