import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// An app started by hand (not by the daemon) declares itself when it connects.
@Suite("Apps started by hand")
struct AppCheckInTests {
    @Test("a hand-started app checks in, is registered and persisted, and receives warm opens")
    func declaresItself() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        // A bundle outside every apps folder: only its own check-in can register it.
        let bundle = try h.bundleOutsideAppsFolders("handy")
        let app = try h.startByHand(bundle: bundle)
        defer { app.stop() }
        try h.eventually("the app checks in") { try h.state(of: "test.handy") == "background" }
        let r = try h.lsopen("--json", "handy:hello")
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.json?["launched"] as? Bool == false)
        let names = h.eventNames(pid: app.pid)
        #expect(names.contains("willEnterForeground"))
        #expect(names.contains { $0.hasPrefix("open url=handy:hello source=org.swift-launch-services.lsopen") })
        #expect(h.appPIDs == [app.pid], "the daemon launched nothing itself")

        app.stop()
        try h.eventually("its exit is noticed") { try h.running().isEmpty }
        try h.restart(signal: SIGKILL)
        #expect(try h.run("lsctl", ["apps", "--json"]).stdout.contains("test.handy"), "the declared registration persists")
    }

    @Test("a process cannot check in as an app whose executable it is not running")
    func impostorRefused() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        // This test process is not alpha's executable.
        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .app, program: "impostor", bundlePath: h.appsFolder + "/alpha.app")))
        let reply = try connection.receive(waitingFor: "the refusal", deadline: .now + .seconds(10))
        guard case .failure(let error) = reply.message else {
            Issue.record("expected a refusal, got \(reply.message.kindName)")
            return
        }
        #expect(error.code == .notPermitted)
        #expect(error.message.contains("is not inside \(h.appsFolder)/alpha.app: it cannot check in"), "\(error.message)")
        #expect(try h.state(of: "test.alpha") == nil)
    }
}
