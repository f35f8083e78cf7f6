import Foundation
import Synchronization
import LaunchServicesCore
@testable import LaunchServicesDaemon
import Testing

/// The start in two parts (`RegistryService.start` before the socket serves, `finish`
/// after) against the one-part read it replaced (`ReferenceRead`, the previous code, kept
/// here as the reference): on randomized registries, restarted again and again, both give
/// the same registry (apps, times, claim order, defaults), the same answer for every scheme
/// (`Registry.resolve`, and `SchemeResolution` with a desktop side), the same refusals and the
/// same saved file; and the claim index answers each scheme's claims, and the counts, as the
/// loaded registry does. Seeded; the seed is printed and replays the run.
@Suite("Registry start: two parts equal the whole read")
struct RegistryStartDifferentialTests {
    static let schemes = (0..<8).map { try! URLScheme(validating: "s\($0)") }
    static let ids = (0..<12).map { "app.\($0)" }
    static let entry = DesktopCandidate(id: "desktop.entry.desktop", source: DesktopSource(kind: .mimeType, file: "/x/desktop.entry.desktop", line: 1), verdict: .chosen)

    @Test("random registrations, withdrawals, defaults, desktop claims and folder changes, over eight restarts", arguments: 0..<25)
    func sameAsWholeRead(seed: Int) throws {
        print("RegistryStartDifferentialTests.sameAsWholeRead seed \(seed)")
        var random = SeededGenerator(seed: UInt64(seed) &* 2_654_435_761 &+ 11)
        let root = NSTemporaryDirectory() + "lsstartdiff-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state"
        var clock: Int64 = 1_000
        func bundle(_ id: String, path: String) -> AppBundle {
            let claimed = Self.schemes.filter { _ in random.chance(0.35) }
            return AppBundle(id: id, name: id, path: path, executable: "run", schemes: claimed,
                             queriesSchemes: random.chance(0.2) ? [Self.schemes[0]] : [],
                             urlTypes: claimed.isEmpty ? [] : [AppBundle.URLType(name: random.chance(0.5) ? "\(id).links" : nil, schemes: claimed)])
        }
        for round in 0..<8 {
            // What the user did while the daemon ran: saved as the daemon saves it.
            do {
                let store = try RegistryStore(folder: state)
                defer { try? store.close() }
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    let id = random.pick(Self.ids)
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<5:
                        // Ties: a few registrations share a time.
                        if !random.chance(0.3) { clock += 1 }
                        try store.save(bundle(id, path: "/manual/\(id).app"), source: .manual, registeredAt: clock)
                    case 5..<7: try store.delete(id)
                    case 7..<9:
                        // A default for a claimant, a non-claimant, a desktop id, or none.
                        let target = random.pick([id, "desktop.entry.desktop", nil] as [String?])
                        try store.setDefault(target, for: random.pick(Self.schemes))
                    default:
                        clock += 1
                        let claimed = Self.schemes.filter { _ in random.chance(0.2) }
                        try store.updateDesktopClaims(seen: Dictionary(uniqueKeysWithValues: claimed.map { ($0, clock) }),
                                                      gone: Self.schemes.filter { !claimed.contains($0) && random.chance(0.3) })
                    }
                }
            }
            // What the apps folders hold at this start: some ids also registered by hand
            // (from the same path or another), and sometimes a folder that cannot be read.
            var scan = BundleLoader.ScanResult()
            for id in Self.ids where random.chance(0.25) {
                scan.bundles.append(bundle(id, path: random.chance(0.8) ? "/apps/\(id).app" : "/manual/\(id).app"))
            }
            scan.coverage = random.chance(0.2)
                ? ScanCoverage(readFolders: [], unreadable: [UnreadablePath(kind: .appsFolder, path: "/apps", reason: "Too many open files")])
                : ScanCoverage(readFolders: ["/apps"])
            let scanned = scan
            clock += random.chance(0.3) ? -50 : 1
            let now = clock
            // The same file read both ways, each on its own copy.
            let reference = root + "/reference-\(round)"
            try FileManager.default.copyItem(atPath: state, toPath: reference)
            let old = try ReferenceRead.read(stateFolder: reference, now: now) { _ in scanned }
            let started = try RegistryService.start(stateFolder: state, folders: ["/apps"], now: now) { _ in scanned }
            // What a read ahead of the load gives for each scheme, taken before the load as the
            // daemon takes it (each into one registry, in a random order of schemes).
            var ahead = Registry()
            var aheadClaims: [URLScheme: Int64] = [:]
            var aheadSources: [String: RegistryStore.Source] = [:]
            var aheadSchemes: Set<URLScheme> = []
            // Through the claim index (a file this code kept) or from the rows, at random.
            let fromIndex = random.chance(0.5)
            for scheme in Self.schemes.shuffled(using: &random) where random.chance(0.8) {
                try started.store?.preview(of: scheme, fromIndex: fromIndex).add(to: &ahead, desktopClaims: &aheadClaims, sources: &aheadSources)
                aheadSchemes.insert(scheme)
            }
            // The load in parts of 1 to 4 apps: the same as in one read.
            let partSize = Int.random(in: 1...4, using: &random)
            let parted = Mutex<Result<RegistryService.Loaded, any Error>?>(nil)
            RegistryService.finish(started, inPartsOn: .inline("the test"), partSize: partSize) { result in
                parted.withLock { $0 = result }
            }
            let new = try RegistryService.finish(started)
            let context = "seed \(seed), round \(round)"
            let inParts = try #require(parted.withLock { $0 }).get()
            #expect(inParts.registry.apps == new.registry.apps, "\(context), parts of \(partSize)")
            #expect(inParts.registry.registeredAt == new.registry.registeredAt, "\(context), parts of \(partSize)")
            #expect(inParts.registry.claimants == new.registry.claimants, "\(context), parts of \(partSize)")
            #expect(inParts.sources == new.sources, "\(context), parts of \(partSize)")
            defer {
                try? old.store?.close()
                try? new.store?.close()
            }
            #expect(new.registry.apps == old.registry.apps, "\(context)")
            #expect(new.registry.registeredAt == old.registry.registeredAt, "\(context)")
            #expect(new.registry.claimants == old.registry.claimants, "\(context)")
            #expect(new.registry.defaults == old.registry.defaults, "\(context)")
            #expect(new.desktopClaims == old.desktopClaims, "\(context)")
            #expect(new.refused.map(\.description).sorted() == old.refused.map(\.description).sorted(), "\(context)")
            #expect(new.sources == old.sources, "\(context)")
            #expect(new.latest == max(old.registry.registeredAt.values.max() ?? 0, old.desktopClaims.values.max() ?? 0), "\(context)")
            for scheme in Self.schemes {
                #expect(new.registry.resolve(scheme) == old.registry.resolve(scheme), "\(context), \(scheme)")
                // The desktop side: a chosen entry claiming the scheme at the saved time, and
                // the user's default when it names the entry (as `RegistryService.resolve`).
                func side(_ loaded: RegistryService.Loaded) -> SchemeResolution.DesktopSide {
                    let named = loaded.registry.defaults[scheme].flatMap { loaded.registry.apps[$0] == nil && $0 == Self.entry.id ? Self.entry : nil }
                    return SchemeResolution.DesktopSide(chosen: Self.entry, since: loaded.desktopClaims[scheme], userDefault: named)
                }
                #expect(SchemeResolution.resolve(scheme, registry: new.registry, desktop: side(new), now: now)
                            == SchemeResolution.resolve(scheme, registry: old.registry, desktop: side(old), now: now), "\(context), \(scheme)")
                // Read ahead of the load, the scheme resolves as in the whole registry.
                if aheadSchemes.contains(scheme) {
                    #expect(ahead.resolve(scheme) == new.registry.resolve(scheme), "\(context), \(scheme) read ahead, from the index: \(fromIndex)")
                    #expect(ahead.handler(for: scheme) == new.registry.handler(for: scheme), "\(context), \(scheme) read ahead, from the index: \(fromIndex)")
                    let aheadSide = SchemeResolution.DesktopSide(chosen: Self.entry, since: aheadClaims[scheme],
                                                                 userDefault: ahead.defaults[scheme].flatMap { ahead.apps[$0] == nil && $0 == Self.entry.id ? Self.entry : nil })
                    #expect(SchemeResolution.resolve(scheme, registry: ahead, desktop: aheadSide, now: now)
                                == SchemeResolution.resolve(scheme, registry: new.registry, desktop: side(new), now: now), "\(context), \(scheme) read ahead, from the index: \(fromIndex)")
                    for id in ahead.apps.keys { #expect(aheadSources[id] == new.sources[id], "\(context), \(id) read ahead") }
                }
                // The claim index (a point query) answers as the loaded registry.
                #expect(try new.store?.claims(on: scheme) == new.registry.claims(on: scheme), "\(context), \(scheme)")
            }
            #expect(started.counts == RegistryStore.Counts(apps: new.registry.apps.count, schemes: new.registry.claimants.count), "\(context)")
            // Both left the same file behind (the folder apps rewritten only when changed).
            let oldSaved = try old.store?.load()
            let newSaved = try new.store?.load()
            #expect(oldSaved?.apps.map { "\($0.app) \($0.source) \($0.registeredAt)" } == newSaved?.apps.map { "\($0.app) \($0.source) \($0.registeredAt)" }, "\(context)")
        }
    }
}

/// The start's read of the registry as it was before it was split in two (one pass over
/// every saved app, before the socket served): the reference `start` + `finish` must equal.
enum ReferenceRead {
    static func read(stateFolder: String, now: Int64, scan scanFolders: ([String]) -> BundleLoader.ScanResult) throws -> RegistryService.Loaded {
        let opened = try RegistryStore(folder: stateFolder)
        let (stored, defaults) = try opened.load()
        let desktopClaims = try opened.desktopClaims()
        var manual: [RegistryStore.Registration] = []
        var saved: [RegistryStore.Registration] = []
        var manualPaths: [String: String] = [:]
        var folderTimes: [String: Int64] = [:]
        var latest: Int64 = 0
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
        let scanTime = max(now, latest + 1)
        let scan = scanFolders(["/apps"])
        var refused = scan.errors
        var fromFolders: [RegistryStore.Registration] = []
        var held: [String: RegistryStore.Registration] = [:]
        if !scan.coverage.isComplete {
            for entry in saved where !scan.coverage.sawGone(bundleAt: entry.app.path) { held[entry.app.id] = entry }
        }
        for bundle in scan.bundles {
            if let path = manualPaths[bundle.id] {
                if path != bundle.path { refused.append(RegistryService.alreadyRegistered(bundle, from: path)) }
                continue
            }
            if let kept = held[bundle.id], kept.app.path != bundle.path { continue }
            held[bundle.id] = nil
            fromFolders.append((bundle, folderTimes[bundle.id] ?? scanTime))
        }
        fromFolders += held.values
        if !RegistryService.same(saved, fromFolders) { try opened.replaceFolderApps(fromFolders) }
        // The registry as `apply` built it then, on the loop.
        var registry = Registry(loading: [manual, fromFolders].joined())
        for (scheme, id) in defaults { registry.setDefault(id, for: scheme) }
        var sources: [String: RegistryStore.Source] = [:]
        for (app, _) in manual { sources[app.id] = .manual }
        for (app, _) in fromFolders { sources[app.id] = .folder }
        var loaded = RegistryService.Loaded(store: opened, manual: manual, fromFolders: fromFolders, defaults: defaults, refused: refused,
                                            unreadable: scan.coverage.unreadable, desktopClaims: desktopClaims)
        loaded.registry = registry
        loaded.sources = sources
        return loaded
    }
}
