import Foundation
import LaunchServicesClient
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// A real daemon started on a large saved registry serves before the registry is in memory
/// (`RegistryService.finishLoading`): requests sent as soon as it answers status — opens'
/// `canOpen`, contested schemes, defaults naming a claimant or not — get the answer the whole
/// registry gives, computed here from the same saved apps (`Registry`). Seeded; the seed is
/// printed. Whether the requests were early enough to wait, and how many schemes were read
/// ahead of the load for them (`RegistryLoadGate`), is printed too (the daemon logs both);
/// the answers must be right either way.
@Suite("Registry: requests while the registry loads")
struct RegistryLoadWhileServingTests {
    @Test("answers sent during the load equal the whole registry's, at once and after it", arguments: [7, 23])
    func sameAnswers(seed: Int) throws {
        print("RegistryLoadWhileServingTests.sameAnswers seed \(seed)")
        var random = SeededGenerator(seed: UInt64(seed))
        let root = try TemporaryFolder(prefix: "lsloading").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state"
        let contested = (0..<20).map { try! URLScheme(validating: "c\($0)") }
        var registrations: [RegistryStore.Registration] = []
        for i in 0..<6_000 {
            // Its own schemes, and now and then contested ones, at times that often tie.
            let own = (0..<3).map { try! URLScheme(validating: "s\(i)x\($0)") }
            let claimed = own + contested.filter { _ in random.chance(0.002) }
            registrations.append((AppBundle(id: "bulk.app\(i)", name: "App \(i)", path: "/nowhere/app\(i).app", executable: "app", schemes: claimed),
                                  Int64.random(in: 1_000...1_050, using: &random)))
        }
        var defaults: [URLScheme: String] = [:]
        // Defaults naming a claimant (the latest one) or, mostly, an app that does not claim it.
        for scheme in contested.prefix(6) {
            let claimant = registrations.last { $0.app.schemes.contains(scheme) }?.app.id
            defaults[scheme] = random.chance(0.5) ? claimant ?? "bulk.app1" : "bulk.app\(Int.random(in: 0..<6_000, using: &random))"
        }
        do {
            let store = try RegistryStore(folder: state)
            try store.save(registrations, source: .manual)
            for (scheme, id) in defaults { try store.setDefault(id, for: scheme) }
            try store.close()
        }
        var model = Registry(loading: registrations)
        for (scheme, id) in defaults { model.setDefault(id, for: scheme) }
        let asked = contested + (0..<30).map { _ in try! URLScheme(validating: "s\(Int.random(in: 0..<6_000, using: &random))x\(Int.random(in: 0..<3, using: &random))") }
            + [try URLScheme(validating: "unclaimed")]

        try FileManager.default.createDirectory(atPath: root + "/apps", withIntermediateDirectories: true)
        let daemon = try DaemonProcess(executable: Self.binary, socket: root + "/socket",
                                       arguments: ["--apps", root + "/apps", "--state", state, "--log-level", "info"],
                                       // The machine's desktop entries are not the test's.
                                       environment: ProcessInfo.processInfo.environment.merging(
                                           ["XDG_DATA_DIRS": root + "/none", "XDG_DATA_HOME": root + "/none", "XDG_CONFIG_HOME": root + "/none", "XDG_CONFIG_DIRS": root + "/none",
                                            "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + root + "/no-bus"]) { $1 },
                                       log: root + "/daemon.log", timeout: 60)
        defer { daemon.stop() }
        let client = try LaunchServicesClient(socketPath: root + "/socket", program: "registry-load-test")
        defer { client.close() }
        var early: [String?] = []
        do {
            for scheme in asked { early.append(try client.canOpen("\(scheme):x").app) }
        } catch {
            Issue.record("\(error); the daemon said: \(daemon.output)")
            return
        }
        let expected = asked.map { model.handler(for: $0)?.id }
        #expect(early == expected, "seed \(seed)")
        let loaded = daemon.output.split(separator: "\n").first { $0.contains("registry loaded") }
        #expect(loaded?.contains("6000 apps") == true, "\(daemon.output)")
        let readAhead = daemon.output.split(separator: "\n").filter { $0.contains("read ahead") }.count
        print("RegistryLoadWhileServingTests seed \(seed): \(readAhead) schemes read ahead; \(loaded ?? "no registry loaded line")")
        // After the load, the same answers again.
        var later: [String?] = []
        for scheme in asked { later.append(try client.canOpen("\(scheme):x").app) }
        #expect(later == expected, "seed \(seed)")
    }

    /// The daemon built beside the tests (`LS_BIN_DIR`, else beside the test bundle).
    static let binary: String = {
        if let dir = ProcessInfo.processInfo.environment["LS_BIN_DIR"], !dir.isEmpty { return dir + "/launchservicesd" }
        var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("launchservicesd").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path + "/launchservicesd"
    }()
}
