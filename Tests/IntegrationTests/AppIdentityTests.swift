import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// A process an app starts speaks as that app, never as the user; a process checking in
/// by hand must run an executable inside the bundle it names; apps learn only the schemes
/// their LSApplicationQueriesSchemes allow.
@Suite("App identity")
struct AppIdentityTests {
    /// A new folder for what the app's child processes write (outside the harness's folder,
    /// which the daemon's apps folder lives in).
    static func scratchFolder(_ prefix: String) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        return out
    }

    /// The children of `pid`, from procfs.
    static func children(of pid: Int32) -> [Int32] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { Int32($0) }
    }

    @Test("an app's child process cannot set a default, register or unregister; its queries show the app itself and what it may query")
    func childSpeaksAsApp() throws {
        let out = try Self.scratchFolder("lsid")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let lsctl = DaemonHarness.binary("lsctl")
        let rogue = out + "/rogue.app"
        try FileManager.default.createDirectory(atPath: rogue, withIntermediateDirectories: true)
        try TestApp.test("rogue", schemes: ["victim"]).plist.write(toFile: rogue + "/Info.plist", atomically: true, encoding: .utf8)
        try DaemonHarness.placeExecutable("lstestapp", at: rogue + "/lstestapp")
        // One line (the behaviour file is one argument per line); each step records its status.
        let script = [
            "\(lsctl) default victim test.zevil >\(out)/default.out 2>&1; echo default $? >>\(out)/status",
            "\(lsctl) register \(rogue) >\(out)/register.out 2>&1; echo register $? >>\(out)/status",
            "\(lsctl) unregister test.victim >\(out)/unregister.out 2>&1; echo unregister $? >>\(out)/status",
            "\(lsctl) schemes --json >\(out)/schemes.json 2>&1",
            "\(lsctl) running --json >\(out)/running.json 2>&1",
        ].joined(separator: "; ")
        var evil = TestApp.test("zevil", schemes: ["zevil", "victim"], "--child-run=\(script)")
        evil.queriesSchemes = ["alpha"]
        let h = try DaemonHarness(apps: [.test("victim"), .test("alpha"), .test("beta"), evil])
        defer { h.stop() }
        #expect(try h.lsopen("beta:1").status == 0, "beta runs, so it could be listed as running")
        #expect(try h.lsopen("zevil:go").status == 0)
        try h.eventually("the child's commands ran") { h.eventNames().contains { $0.hasPrefix("childRun -> ") } }

        let statuses = (try? String(contentsOfFile: out + "/status", encoding: .utf8)) ?? ""
        #expect(statuses == "default 1\nregister 1\nunregister 1\n", "every command refused: \(statuses)")
        for step in ["default", "register", "unregister"] {
            let text = (try? String(contentsOfFile: out + "/\(step).out", encoding: .utf8)) ?? ""
            #expect(text.contains("test.zevil is an app"), "\(step): \(text)")
        }
        let schemes = try JSONDecoder().decode([SchemeReport].self, from: Data(contentsOf: URL(fileURLWithPath: out + "/schemes.json")))
        #expect(schemes.map(\.scheme) == ["alpha", "victim", "zevil"], "the queryable scheme and the app's own: \(schemes)")
        #expect(schemes.first { $0.scheme == "victim" }?.app == "test.victim", "it sees who opens a scheme it declares")
        #expect(schemes.first { $0.scheme == "zevil" }?.app == "test.zevil")
        #expect(!schemes.contains { $0.scheme == "beta" }, "nothing else")
        let running = try JSONDecoder().decode([RunningReport].self, from: Data(contentsOf: URL(fileURLWithPath: out + "/running.json")))
        #expect(running.map(\.id) == ["test.zevil"], "not beta: \(running)")

        // Nothing changed for the user.
        let explain = try h.lsctl("explain", "victim:x", "--json").decode(ExplainReport.self)
        #expect(explain.app == "test.victim", "\(explain)")
        #expect(explain.userDefault == nil)
        #expect(!(try h.lsctl("apps", "--json").stdout.contains("test.rogue")))
        #expect(try h.lsopen("victim:x").status == 0)
    }

    @Test("a hand-started process whose bundle executable is a symbolic link out of the bundle is refused")
    func symlinkedExecutableRefused() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let bundle = try h.bundleOutsideAppsFolders("fake", executable: false)
        try FileManager.default.createSymbolicLink(atPath: bundle + "/lstestapp", withDestinationPath: DaemonHarness.binary("lstestapp"))
        let app = try h.startByHand(bundle: bundle)
        defer { app.stop() }
        try h.eventually("the refused app exits") { !isAlive(app.pid) }
        let said = h.byHandOutput
        #expect(said.contains("which is not inside \(bundle)"), "\(said)")
        #expect(!(try h.lsctl("apps", "--json").stdout.contains("test.fake")), "nothing was registered")
    }

    @Test("a process an app lets go (double fork) still cannot administer, and ends when the daemon stops")
    func orphanOfApp() throws {
        let out = try Self.scratchFolder("lsorphan")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let lsctl = DaemonHarness.binary("lsctl")
        // The app's shell starts a new session in the background and exits at once: the
        // inner shell loses its parent and is reparented (to the daemon, its subreaper).
        let inner = "echo $$ >\(out)/pid; sleep 1; \(lsctl) default victim test.zevil >\(out)/default.out 2>&1; echo default $? >>\(out)/status; \(lsctl) schemes --json >\(out)/schemes.json 2>&1; sleep 60"
        let escape = TestApp.test("zevil", schemes: ["zevil", "victim"], "--child-run=setsid sh -c '\(inner)' >/dev/null 2>&1 &")
        let h = try DaemonHarness(apps: [.test("victim"), escape])
        defer { h.stop() }
        #expect(try h.lsopen("zevil:go").status == 0)
        try h.eventually("the orphan's commands ran", within: 15) {
            ((try? String(contentsOfFile: out + "/schemes.json", encoding: .utf8)) ?? "").contains("]")
        }
        let status = (try? String(contentsOfFile: out + "/status", encoding: .utf8)) ?? ""
        #expect(status == "default 1\n", "refused: \(status)")
        let said = (try? String(contentsOfFile: out + "/default.out", encoding: .utf8)) ?? ""
        #expect(said.contains("org.swift-launch-services.orphaned-app is an app"), "\(said)")
        let schemes = (try? String(contentsOfFile: out + "/schemes.json", encoding: .utf8)) ?? ""
        let listed = try JSONDecoder().decode([SchemeReport].self, from: Data(schemes.utf8))
        #expect(listed.isEmpty, "no scheme shown: \(schemes)")
        #expect(try h.lsctl("explain", "victim:x", "--json").decode(ExplainReport.self).app == "test.victim")
        // The orphan ends when the daemon stops.
        let pid = try #require(Int32(((try? String(contentsOfFile: out + "/pid", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        // It leads its own session: should the daemon fail to end it, the test does.
        defer { kill(-pid, SIGKILL) }
        let sleeper = try #require(Self.children(of: pid).first, "the orphan's sleep")
        #expect(isAlive(pid))
        kill(h.daemonPID, SIGTERM)
        try h.eventually("the daemon stops") { !isAlive(h.daemonPID) }
        try h.eventually("the orphan and its child ended with it", within: 5) { !isAlive(pid) && !isAlive(sleeper) }
    }
}
