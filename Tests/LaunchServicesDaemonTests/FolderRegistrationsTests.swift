import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// At start the daemon rewrites the saved folder registrations only when the scan found
/// something else (`RegistryService.same`): any changed app, time, or member must count.
@Suite("RegistryService: saved folder registrations compared with the scan")
struct FolderRegistrationsTests {
    func app(_ id: String, _ schemes: [String] = ["s"], path: String? = nil) throws -> AppBundle {
        AppBundle(id: id, name: id, path: path ?? "/apps/\(id).app", executable: "run", schemes: try schemes.map { try URLScheme(validating: $0) })
    }

    @Test("the same apps and times, in another order, are the same")
    func sameInAnyOrder() throws {
        let a = [(app: try app("a"), registeredAt: Int64(1)), (app: try app("b"), registeredAt: Int64(2))]
        #expect(RegistryService.same(a, a.reversed()))
        #expect(RegistryService.same([], []))
    }

    @Test("a changed time, a changed bundle, a missing or an extra app is a change")
    func anyDifference() throws {
        let a = [(app: try app("a"), registeredAt: Int64(1)), (app: try app("b"), registeredAt: Int64(2))]
        #expect(!RegistryService.same(a, [a[0], (app: a[1].app, registeredAt: Int64(3))]))
        #expect(!RegistryService.same(a, [a[0], (app: try app("b", ["t"]), registeredAt: Int64(2))]))
        #expect(!RegistryService.same(a, [a[0], (app: try app("b", path: "/elsewhere/b.app"), registeredAt: Int64(2))]))
        #expect(!RegistryService.same(a, [a[0]]))
        #expect(!RegistryService.same([a[0]], a))
        #expect(!RegistryService.same([a[0], a[0]], a))
    }
}

/// A scan that could not read a folder or a bundle now withdraws nothing of it, at start
/// (`RegistryService.read`) and at a rescan (`applyRescan`): the apps stay registered with
/// their times, and the database keeps them.
@Suite("RegistryService: an incomplete scan withdraws nothing")
struct IncompleteScanTests {
    let helper = BundleLoaderFolderTests()

    /// A folder listing that fails as at the descriptor limit.
    static func atTheLimit(_ folders: [String]) -> BundleLoader.ScanResult {
        BundleLoader.scan(folders: folders) { _ in .unreadable(EMFILE) }
    }

    func makeApps(_ root: String) throws -> String {
        let apps = root + "/apps"
        try helper.makeBundle(at: apps + "/alpha.app", plist: BundleLoaderFolderTests.plist(id: "com.alpha", urlTypes: BundleLoaderFolderTests.schemes("alpha")))
        try helper.makeBundle(at: apps + "/beta.app", plist: BundleLoaderFolderTests.plist(id: "com.beta", urlTypes: BundleLoaderFolderTests.schemes("beta")))
        return apps
    }

    /// The folder registrations saved in `state`, by id, with their times.
    func saved(_ state: String) throws -> [String: Int64] {
        let store = try RegistryStore(folder: state)
        defer { try? store.close() }
        return Dictionary(uniqueKeysWithValues: try store.load().apps.filter { $0.source == .folder }.map { ($0.app.id, $0.registeredAt) })
    }

    @Test("at start, a folder that cannot be listed keeps its saved apps and their times, and the database is not rewritten")
    func atStart() throws {
        try TemporaryFolder.with { root in
            let apps = try makeApps(root)
            let state = root + "/state"
            let first = try RegistryService.read(stateFolder: state, folders: [apps])
            try first.store?.close()
            let times = try saved(state)
            #expect(times.keys.sorted() == ["com.alpha", "com.beta"])

            let incomplete = try RegistryService.read(stateFolder: state, folders: [apps], scan: Self.atTheLimit)
            try incomplete.store?.close()
            #expect(Dictionary(uniqueKeysWithValues: incomplete.fromFolders.map { ($0.app.id, $0.registeredAt) }) == times)
            #expect(incomplete.unreadable.map(\.description) == ["apps folder \(apps) could not be read (Too many open files)"])
            #expect(incomplete.refused.isEmpty)
            #expect(try saved(state) == times)

            // Read in full with beta gone: beta is withdrawn, alpha keeps its time.
            try FileManager.default.removeItem(atPath: apps + "/beta.app")
            let complete = try RegistryService.read(stateFolder: state, folders: [apps])
            try complete.store?.close()
            #expect(complete.fromFolders.map(\.app.id) == ["com.alpha"])
            #expect(complete.unreadable.isEmpty)
            #expect(try saved(state) == ["com.alpha": times["com.alpha"]!])
        }
    }

    @Test("at a rescan, an unreadable folder or bundle keeps its apps and times; a retry is due until a scan reads everything")
    func atRescan() throws {
        try TemporaryFolder.with { root in
            let apps = try makeApps(root)
            let state = root + "/state"
            let loop = EmbeddedEventLoop()
            let service = RegistryService(loop: loop, logger: Logger(label: "incomplete-scan-tests") { _ in SwiftLogNoOpLogHandler() },
                                          folders: [apps], watchFolders: false, files: .onLoop(loop))
            defer {
                service.stop()
                try? service.store?.close()
            }
            service.apply(try RegistryService.read(stateFolder: state, folders: [apps]))
            let times = try #require(service.store).load().apps.reduce(into: [String: Int64]()) { $0[$1.app.id] = $1.registeredAt }
            /// Runs the saves (their work queue is the loop), then their completions.
            func settle() {
                loop.run()
                loop.run()
            }

            let limited = service.applyRescan(Self.atTheLimit([apps]))
            #expect(limited.removed.isEmpty && limited.added.isEmpty && limited.changed.isEmpty, "\(limited)")
            #expect(limited.unreadable == ["apps folder \(apps) could not be read (Too many open files)"])
            #expect(service.registry.apps.keys.sorted() == ["com.alpha", "com.beta"])
            #expect(service.registeredAt("com.alpha") == times["com.alpha"] && service.registeredAt("com.beta") == times["com.beta"])
            #expect(service.pendingRetry != nil, "the folders are read again later")
            #expect(service.unreadable.count == 1)

            // Beta's Info.plist fails with an I/O error, alpha's changed: alpha is updated,
            // beta stays as it was.
            try FileManager.default.removeItem(atPath: apps + "/beta.app/Info.plist")
            #expect(symlink("/proc/self/mem", apps + "/beta.app/Info.plist") == 0)
            try writeFile(BundleLoaderFolderTests.plist(id: "com.alpha", urlTypes: BundleLoaderFolderTests.schemes("alpha", "alpha2")), to: apps + "/alpha.app/Info.plist")
            let partial = service.applyRescan(BundleLoader.scan(folders: [apps]))
            settle()
            #expect(partial.changed == ["com.alpha"] && partial.removed.isEmpty, "\(partial)")
            #expect(partial.unreadable == ["bundle \(apps)/beta.app could not be read (Info.plist: Input/output error)"])
            #expect(service.registry.apps["com.beta"] != nil && service.registeredAt("com.beta") == times["com.beta"])
            #expect(try saved(stateOf: service) == times, "saved: alpha changed (its time kept), beta as it was")

            // Beta removed: the scan reads everything and withdraws it; no retry is due.
            try FileManager.default.removeItem(atPath: apps + "/beta.app")
            let complete = service.applyRescan(BundleLoader.scan(folders: [apps]))
            settle()
            #expect(complete.removed == ["com.beta"] && complete.unreadable.isEmpty, "\(complete)")
            #expect(service.pendingRetry == nil)
            #expect(service.unreadable.isEmpty)
            #expect(try saved(stateOf: service) == ["com.alpha": times["com.alpha"]!])
        }
    }

    /// The folder registrations `service` saved, read through its own store.
    func saved(stateOf service: RegistryService) throws -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: try #require(service.store).load().apps.filter { $0.source == .folder }.map { ($0.app.id, $0.registeredAt) })
    }
}
