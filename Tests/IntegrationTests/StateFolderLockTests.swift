import Foundation
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// One daemon per state folder: a second `launchservicesd` on the same `--state` refuses
/// before it reads or writes anything there, naming the daemon that holds it; one on a
/// served socket refuses before it scans anything.
@Suite("One daemon per state folder")
struct StateFolderLockTests {
    /// Runs another `launchservicesd` to its end (it is expected to refuse, so it is not
    /// waited for as a server), with `arguments` after `--log-level debug`.
    func secondDaemon(_ h: DaemonHarness, _ arguments: [String]) throws -> ToolRun {
        try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--log-level", "debug"] + arguments,
                             environment: ProcessInfo.processInfo.environment, scratch: h.root, timeout: 20)
    }

    func explainXYZ(_ h: DaemonHarness) throws -> ExplainReport {
        try h.lsctl("explain", "--json", "xyz:x").decode(ExplainReport.self)
    }

    @Test("a second daemon on the same state folder, same socket or another, refuses before changing a byte, naming the holder's PID and socket")
    func secondDaemonRefuses() throws {
        let h = try DaemonHarness(apps: [try .demo("xyz")])
        defer { h.stop() }
        let state = h.root + "/state"
        try FileManager.default.createDirectory(atPath: h.root + "/empty", withIntermediateDirectories: true)
        #expect(try h.lsctl("register", try h.bundleOutsideAppsFolders("manual")).status == 0)
        let before = (registry: DatabaseCopy.bytes(state + "/registry.sqlite"), pasteboard: DatabaseCopy.bytes(state + "/pasteboard.sqlite"))
        #expect(before.registry[""] != nil, "the registry exists")
        for socket in [h.socket, h.root + "/other-socket"] {
            let refused = try secondDaemon(h, ["--socket", socket, "--apps", h.root + "/empty", "--state", state])
            #expect(refused.status != 0, "\(refused.stderr)")
            #expect(refused.stderr.contains("pid \(h.daemonPID)"), "names the holder's PID: \(refused.stderr)")
            #expect(refused.stderr.contains(h.socket), "names the holder's socket: \(refused.stderr)")
            #expect(refused.stderr.contains(state), "names the state folder: \(refused.stderr)")
            #expect(DatabaseCopy.bytes(state + "/registry.sqlite") == before.registry, "the registry is byte for byte as it was (socket \(socket))")
            #expect(DatabaseCopy.bytes(state + "/pasteboard.sqlite") == before.pasteboard, "so is the pasteboard database (socket \(socket))")
        }
        #expect(!FileManager.default.fileExists(atPath: h.root + "/other-socket"), "the refused daemon bound nothing")
        #expect(isAlive(h.daemonPID))
        #expect(try explainXYZ(h).app == "com.sadun.xyz")
        #expect(try h.lsctl("apps", "--json").decode([AppReport].self).map(\.id).sorted() == ["com.sadun.xyz", "test.manual"])
    }

    @Test("a second daemon on a served socket refuses before it opens or scans anything of its own state folder")
    func servedSocketRefusesBeforeScanning() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let other = h.root + "/other-state"
        let refused = try secondDaemon(h, ["--socket", h.socket, "--apps", h.appsFolder, "--state", other])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("already serves \(h.socket)"), "\(refused.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: other)) ?? []
        #expect(!left.contains("registry.sqlite") && !left.contains("pasteboard.sqlite"), "no database was opened: \(left)")
        #expect(!refused.stderr.contains("registry loaded"), "no scan: \(refused.stderr)")
        #expect(try h.lsopen("alpha:still-served").status == 0)
    }

    @Test("a refused second daemon with an empty apps folder does not cost xyz its scheme: after a restart xyz: still opens in com.sadun.xyz")
    func hijackAfterRefusedDaemon() throws {
        let h = try DaemonHarness(apps: [try .demo("xyz")])
        defer { h.stop() }
        try FileManager.default.createDirectory(atPath: h.root + "/empty", withIntermediateDirectories: true)
        #expect(try explainXYZ(h).app == "com.sadun.xyz")
        // A later bundle with a smaller id claims xyz; the folder watch registers it as a contender.
        var hijacker = TestApp.test("hijacker", schemes: ["xyz"])
        hijacker.id = "aaa.hijacker"
        try h.install(hijacker)
        try h.eventually("the folder watch registers aaa.hijacker") { try explainXYZ(h).claimants.contains("aaa.hijacker") }
        #expect(try explainXYZ(h).app == "com.sadun.xyz")
        let refused = try secondDaemon(h, ["--socket", h.socket, "--apps", h.root + "/empty", "--state", h.root + "/state"])
        #expect(refused.status != 0, "\(refused.stderr)")
        try h.restart(signal: SIGTERM)
        let explained = try explainXYZ(h)
        #expect(explained.app == "com.sadun.xyz", "\(explained)")
        #expect(explained.claimants == ["aaa.hijacker", "com.sadun.xyz"], "\(explained)")
        let opened = try h.lsopen("--json", "xyz:still-mine")
        #expect(opened.status == 0, "\(opened.stdout) \(opened.stderr)")
        #expect(opened.json?["app"] as? String == "com.sadun.xyz", "\(opened.stdout)")
    }

    @Test("the lock file names the daemon holding the state folder, and a clean stop lets the next daemon take it")
    func lockFileNamesHolder() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let lock = try String(contentsOfFile: h.root + "/state/launchservicesd.lock", encoding: .utf8)
        #expect(lock.contains("pid \(h.daemonPID)") && lock.contains(h.socket), "\(lock)")
        try h.restart(signal: SIGTERM)
        let next = try String(contentsOfFile: h.root + "/state/launchservicesd.lock", encoding: .utf8)
        #expect(next.contains("pid \(h.daemonPID)"), "\(next)")
        // A SIGKILLed daemon's lock goes with its process: the next one starts.
        try h.restart(signal: SIGKILL)
        #expect(try h.lsopen("alpha:after-kill").status == 0)
    }
}
