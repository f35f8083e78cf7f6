import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// Input nested deep enough to overflow a recursive parser's stack (Foundation's plist
/// parser recurses once per level; an Info.plist 10,000 deep crashed the daemon) is refused
/// with a named error, through every way it reaches the daemon, and the daemon serves on.
@Suite("Hostile input does not crash the daemon")
struct HostileInputTests {
    static let depth = 10_000

    /// A syntactically valid XML plist whose CFBundleURLTypes nests `depth` arrays.
    static func deepPlist(id: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>CFBundleIdentifier</key><string>\(id)</string>
        <key>CFBundleExecutable</key><string>lstestapp</string>
        <key>CFBundleURLTypes</key>\(String(repeating: "<array>", count: depth))\(String(repeating: "</array>", count: depth))
        </dict></plist>
        """
    }

    static func bundle(at path: String, id: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try deepPlist(id: id).write(toFile: path + "/Info.plist", atomically: true, encoding: .utf8)
        try DaemonHarness.placeExecutable("lstestapp", at: path + "/lstestapp")
    }

    @Test("a 10,000-deep Info.plist in the apps folder is skipped with a log line; the daemon serves on")
    func appsFolder() throws {
        var deep = TestApp.test("deep")
        deep.rawPlist = Self.deepPlist(id: "test.deep")
        let h = try DaemonHarness(apps: [.test("alpha"), deep])
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        let refused = try h.lsctl("status", "--json").decode(StatusReport.self).refusedBundles
        #expect(refused.contains { $0.contains("deep.app") && $0.contains("nest") }, "\(refused)")
        // Added while running: the rescan skips it too.
        try Self.bundle(at: h.appsFolder + "/deeper.app", id: "test.deeper")
        let rescan = try h.lsctl("rescan", "--json")
        #expect(rescan.status == 0, "\(rescan.stdout) \(rescan.stderr)")
        #expect(try rescan.decode(RescanSummary.self).refused.contains { $0.contains("deeper.app") }, "\(rescan.stdout)")
        #expect(try h.lsopen("alpha:2").status == 0, "still serving")
    }

    @Test("lsctl register of a 10,000-deep Info.plist: a named error; the daemon serves on")
    func register() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        try Self.bundle(at: h.root + "/deep.app", id: "test.deep")
        let r = try h.lsctl("register", h.root + "/deep.app")
        #expect(r.status == 1)
        #expect(r.stderr.contains("Info.plist nests arrays and dictionaries deeper than the limit of 32 levels"), "\(r.stderr)")
        #expect(try h.lsopen("alpha:1").status == 0)
    }

    @Test("a hand-started app checking in with a 10,000-deep Info.plist: refused, named; the daemon serves on")
    func checkIn() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let folder = h.root + "/deep.app"
        try Self.bundle(at: folder, id: "test.deep")
        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        // The check-in names the bundle; this test process is not its executable, so the
        // daemon refuses before it reads the plist at all.
        try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .app, program: "deep", bundlePath: folder)))
        let reply = try connection.receive(waitingFor: "the refusal", deadline: .now + .seconds(10))
        guard case .failure(let error) = reply.message else {
            Issue.record("expected a refusal, got \(reply.message.kindName)")
            return
        }
        #expect(error.code == .notPermitted, "\(error)")
        // The app itself (its executable is inside the bundle) gets past that check; its
        // plist is then refused by name.
        let app = try h.startByHand(bundle: folder)
        defer { app.stop() }
        try h.eventually("the refused app exits") { !isAlive(app.pid) }
        let said = h.byHandOutput
        #expect(said.contains("cannot check in") && said.contains("nest"), "\(said)")
        #expect(try h.lsopen("alpha:1").status == 0)
    }

    @Test("a public.json pasteboard item nested 100,000 levels is refused")
    func deepJSON() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let copy = try h.shell(#"yes '[' | head -n 100000 | tr -d '\n' | "$LSCTL" pasteboard copy --name deep --type public.json"#)
        #expect(copy.status == 1)
        #expect(copy.stderr.contains("nesting depth > 512"), "\(copy.stderr)")
        #expect(isAlive(h.daemonPID))
        #expect(try h.lsctl("pasteboard", "copy", "--name", "deep", "--type", "public.json", "--text", "[[1]]").status == 0)
    }
}
