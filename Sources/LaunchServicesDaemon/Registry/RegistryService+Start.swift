import LaunchServicesCore

/// The registry's start in two parts, so the first answer does not wait for every app:
/// `start`, before the socket serves, opens the store, scans the apps folders against the
/// folder apps saved and reads the two counts `lsctl status` shows (claim index, v7);
/// `finish`, on `files` once the socket serves, reads the apps registered by hand, the
/// defaults and the desktop claims, and builds the in-memory registry there, off the loop.
/// Requests that need the registry wait for it meanwhile (`RegistryLoadGate`), so every
/// answer is the one the whole registry gives.
extension RegistryService {
    /// What `start` read.
    struct Started: Sendable {
        var store: RegistryStore?
        /// Folder bundles keep the time saved for them; those new to the database share the
        /// time of this scan.
        var fromFolders: [RegistryStore.Registration]
        var refused: [BundleError]
        var unreadable: [UnreadablePath]
        /// As saved once the folder apps are: what the loaded registry will count.
        var counts: RegistryStore.Counts?
    }

    /// Reads the whole registry (blocking: call it off the loop), as `start` then `finish`.
    static func read(stateFolder: String?, folders: [String], now: Int64 = RegistryStore.millisecondsNow(),
                     scan scanFolders: ([String]) -> BundleLoader.ScanResult = BundleLoader.scan) throws -> Loaded {
        try finish(try start(stateFolder: stateFolder, folders: folders, now: now, scan: scanFolders))
    }

    /// The part of the start before the socket serves (blocking: off the loop): the store
    /// opened, the user's registrations left on disk, the apps folders (`scan`: the system's,
    /// unless a test stands in). A folder bundle whose id was registered by hand from another
    /// path is refused. A saved folder app in a folder or bundle the scan could not read
    /// stays as saved (`ScanCoverage`). Reads the folder apps and one row per bundle found,
    /// never every app.
    static func start(stateFolder: String?, folders: [String], now: Int64 = RegistryStore.millisecondsNow(),
                      scan scanFolders: ([String]) -> BundleLoader.ScanResult = BundleLoader.scan) throws -> Started {
        var saved: [RegistryStore.Registration] = []
        var store: RegistryStore?
        var latest: Int64 = 0
        if let stateFolder {
            func openAndRead() throws -> RegistryStore {
                let opened = try RegistryStore(folder: stateFolder)
                do {
                    saved = try opened.loadApps(source: .folder).map { ($0.app, $0.registeredAt) }
                    latest = try opened.latestRegistration()
                    return opened
                } catch {
                    opened.distrustCleanClose()
                    try? opened.close()
                    throw error
                }
            }
            let trusted = CleanClose.matches(RegistryStore.path(in: stateFolder))
            do {
                store = try openAndRead()
            } catch where trusted {
                // Unreadable though a clean stop left it so (damage no write made): the record
                // is gone, so this open checks the file, and sets it aside if it is damaged.
                store = try openAndRead()
            }
        }
        var folderTimes: [String: Int64] = [:]
        for entry in saved where folderTimes[entry.app.id] == nil { folderTimes[entry.app.id] = entry.registeredAt }
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
            if let path = try store?.manualPath(of: bundle.id) {
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
        // start the saved folder registrations are what the scan found.
        if !Self.same(saved, fromFolders) { try store?.replaceFolderApps(fromFolders) }
        return Started(store: store, fromFolders: fromFolders, refused: refused, unreadable: scan.coverage.unreadable, counts: try store?.counts())
    }

    /// The rest (blocking: on `files`): the apps registered by hand (read now, unless `manual`
    /// has them), the defaults and the desktop claims, and the registry built from them.
    static func finish(_ started: Started, manual: [RegistryStore.Registration]? = nil) throws -> Loaded {
        var loaded = Loaded(store: started.store, manual: [], fromFolders: started.fromFolders, defaults: [:], refused: started.refused,
                            unreadable: started.unreadable)
        if let store = started.store {
            loaded.manual = try manual ?? store.loadApps(source: .manual).map { ($0.app, $0.registeredAt) }
            loaded.defaults = try store.loadDefaults()
            loaded.desktopClaims = try store.desktopClaims()
        }
        return built(loaded)
    }

    /// Apps registered by hand read in each part of the load after the socket serves.
    static let loadPart = 250

    /// `finish` on `files`, the apps registered by hand read `loadPart` at a time, each part a
    /// job of its own: a scheme's read-ahead (`readAhead`) queued meanwhile runs after the
    /// part under way, not after the whole load. `done` runs on `files`.
    static func finish(_ started: Started, inPartsOn files: WorkQueue, partSize: Int = loadPart, done: @escaping @Sendable (Result<Loaded, any Error>) -> Void) {
        guard let store = started.store else {
            return files.async { done(Result { try finish(started) }) }
        }
        /// The parts read so far. Unchecked: only the load's own jobs touch it, one at a time,
        /// each queued by the one before it on the serial `files` queue, and `done` reads it
        /// last, in the final job.
        final class Parts: @unchecked Sendable {
            var read: [RegistryStore.Registration] = []
        }
        let parts = Parts()
        @Sendable func readPart(after id: String?) {
            do {
                let part = try store.loadApps(source: .manual, after: id, limit: partSize)
                parts.read += part.lazy.map { ($0.app, $0.registeredAt) }
                if part.count == partSize, let last = part.last {
                    return files.async { readPart(after: last.app.id) }
                }
                done(Result { try finish(started, manual: parts.read) })
            } catch {
                done(.failure(error))
            }
        }
        files.async { readPart(after: nil) }
    }

    /// `loaded` with its registry built, in one pass (`Registry(loading:)`), and what the
    /// loop would otherwise compute over every app: sources, the latest time, the contested
    /// schemes.
    static func built(_ loaded: Loaded) -> Loaded {
        var loaded = loaded
        var registry = Registry(loading: [loaded.manual, loaded.fromFolders].joined())
        for (scheme, id) in loaded.defaults { registry.setDefault(id, for: scheme) }
        var sources: [String: RegistryStore.Source] = [:]
        sources.reserveCapacity(registry.apps.count)
        for (app, _) in loaded.manual { sources[app.id] = .manual }
        for (app, _) in loaded.fromFolders { sources[app.id] = .folder }
        loaded.latest = max(registry.registeredAt.values.max() ?? 0, loaded.desktopClaims.values.max() ?? 0)
        loaded.contested = registry.claimants.compactMap { $0.value.count > 1 && registry.defaults[$0.key] == nil ? $0.key : nil }.sorted()
        loaded.registry = registry
        loaded.sources = sources
        return loaded
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
}
