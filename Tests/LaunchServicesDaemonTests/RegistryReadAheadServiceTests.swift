import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import LaunchServicesProtocol
import NIOEmbedded
import Testing

/// The registry's load in parts, with schemes read ahead meanwhile, driven one job at a time
/// on an embedded loop (`files` is the loop): the whole registry replaces the parts read
/// ahead, and a rescan asked for during the load is applied to the whole registry once it is
/// in, not to the parts (which the whole one would replace, losing the scan's bundle).
@Suite("RegistryService: schemes read ahead while the registry loads in parts")
struct RegistryReadAheadServiceTests {
    let helper = BundleLoaderFolderTests()

    /// A service begun on a saved registry of `count` apps registered by hand (each with a
    /// scheme of its own, `hN`), its load not started; its files queue is the embedded loop.
    func begun(_ root: String, count: Int) throws -> (service: RegistryService, loop: EmbeddedEventLoop, apps: String) {
        let apps = root + "/apps"
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        let state = root + "/state"
        let store = try RegistryStore(folder: state)
        try store.save((0..<count).map { i in
            (app: AppBundle(id: "hand.app\(i)", name: "a", path: "/hand/\(i).app", executable: "x", schemes: [try! URLScheme(validating: "h\(i)")]),
             registeredAt: Int64(1_000 + i))
        }, source: .manual)
        try store.close()
        let loop = EmbeddedEventLoop()
        let service = RegistryService(loop: loop, logger: Logger(label: "read-ahead-tests") { _ in SwiftLogNoOpLogHandler() },
                                      folders: [apps], watchFolders: false, files: .onLoop(loop))
        service.begin(try RegistryService.start(stateFolder: state, folders: [apps]), loaded: nil)
        return (service, loop, apps)
    }

    /// `body` with a service `begun` in a temporary folder of its own, stopped and its store
    /// closed afterwards.
    func withBegun(count: Int, _ body: (_ service: RegistryService, _ loop: EmbeddedEventLoop, _ apps: String) throws -> Void) throws {
        try TemporaryFolder.with { root in
            let (service, loop, apps) = try begun(root, count: count)
            defer {
                service.stop()
                try? service.store?.close()
            }
            try body(service, loop, apps)
        }
    }

    @Test("the user's canOpen of one scheme is answered from its read-ahead while the load still runs; the whole registry replaces it")
    func readAheadAnswersDuringTheLoad() throws {
        // Three parts and a bit.
        let count = RegistryService.loadPart * 3 + 7
        try withBegun(count: count) { service, loop, _ in
            #expect(service.isLoading)
            let user = ClientConnection(channel: EmbeddedChannel(), kind: .socket, identity: LaunchServicesDaemon.shellIdentity)
            user.greeted = true
            var answered: (loading: Bool, apps: Int, handler: String?)?
            let wanted = try URLScheme(validating: "h\(count - 1)")
            // Held; its scheme's read-ahead goes on the queue before the load's first part.
            #expect(service.loadGate.admit(Envelope(id: 1, .canOpen(url: "\(wanted):x")), from: user) {
                answered = (service.isLoading, service.registry.apps.count, service.registry.handler(for: wanted)?.id)
            } == .held)
            service.finishLoading()
            loop.run()
            let early = try #require(answered)
            #expect(early.loading, "answered before the load was in")
            #expect(early.apps == 1, "from the read-ahead alone")
            #expect(early.handler == "hand.app\(count - 1)")
            #expect(!service.isLoading)
            #expect(service.registry.apps.count == count)
            #expect(service.registry.handler(for: wanted)?.id == "hand.app\(count - 1)")
        }
    }

    @Test("a rescan asked for while the load runs, with a scheme read ahead, is applied to the whole registry")
    func rescanDuringLoad() throws {
        let count = RegistryService.loadPart * 2 + 1
        try withBegun(count: count) { service, loop, apps in
            // A read-ahead and a rescan queued behind the load's first part; a bundle arrives
            // in the apps folder first.
            service.finishLoading()
            service.readAhead(try URLScheme(validating: "h0"))
            _ = try helper.makeBundle(at: apps + "/alpha.app", plist: BundleLoaderFolderTests.plist(id: "com.alpha", urlTypes: BundleLoaderFolderTests.schemes("alpha")))
            var summaries = 0
            service.rescan { _ in summaries += 1 }
            service.rescan { _ in summaries += 1 }
            loop.run()
            #expect(!service.isLoading)
            #expect(summaries == 2, "one scan answers both")
            #expect(service.registry.apps.count == count + 1)
            #expect(service.registry.handler(for: try URLScheme(validating: "alpha"))?.id == "com.alpha", "the rescan's bundle is in the whole registry")
            #expect(service.registry.handler(for: try URLScheme(validating: "h\(count - 1)"))?.id == "hand.app\(count - 1)")
            #expect(try #require(service.store).load().apps.contains { $0.app.id == "com.alpha" && $0.source == .folder }, "and saved")
        }
    }
}
