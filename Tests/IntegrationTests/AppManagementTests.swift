import Foundation
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// `lsctl quit` and `lsctl history` against a real daemon and real apps.
@Suite("App management")
struct AppManagementTests {
    @Test("quit: a cooperative app runs willTerminate and exits; the answer says so")
    func quitCooperative() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        let pid = try #require(try h.running().first { $0.id == "test.alpha" }?.pid)
        let quit = try h.lsctl("quit", "test.alpha", "--json")
        #expect(quit.status == 0, "\(quit.stderr)")
        let report = try quit.decode(QuitReport.self)
        #expect(report.ended == "exited")
        #expect(report.pid == pid)
        #expect(h.eventNames(pid: pid).contains("willTerminate"))
        #expect(!isAlive(pid))
        #expect(try h.state(of: "test.alpha") == nil)
        #expect(try h.lsopen("--json", "alpha:2").json?["launchState"] as? String == "cold", "the next open launches it afresh")
    }

    @Test("quit: an app that outlives its closed connection gets SIGTERM; one that ignores SIGTERM too is killed")
    func quitStubborn() throws {
        let h = try DaemonHarness(apps: [.test("stays", "--terminate=stay"), .test("deaf", "--terminate=stay-ignoring-term")],
                                  config: #"{"shutdownGraceSeconds": 0.5}"#)
        defer { h.stop() }
        #expect(try h.lsopen("stays:1").status == 0)
        #expect(try h.lsopen("deaf:1").status == 0)
        let stays = try h.lsctl("quit", "test.stays", "--json").decode(QuitReport.self)
        #expect(stays.ended == "terminated")
        #expect(stays.seconds >= 0.4)
        let deaf = try h.lsctl("quit", "test.deaf")
        #expect(deaf.status == 0, "\(deaf.stderr)")
        #expect(deaf.stdout.contains("killed with SIGKILL"), "\(deaf.stdout)")
        #expect(h.daemonOutput.contains("asked to quit and ignored both its closed connection and SIGTERM"))
        #expect(try h.running().isEmpty)
    }

    @Test("quit refuses, by name, an app that is not running or not registered, and apps may not quit others")
    func quitRefusals() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let idle = try h.lsctl("quit", "test.alpha")
        #expect(idle.status == 1)
        #expect(idle.stderr.contains("test.alpha is not running"))
        let unknown = try h.lsctl("quit", "test.nobody")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no app with bundle id 'test.nobody' is registered"))
    }

    @Test("history: recent opens with scheme, app, launch state, outcome and phase times, never the URL; -n keeps the last N")
    func history() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        #expect(try h.lsopen("alpha:secret-token-1").status == 0)
        #expect(try h.lsopen("alpha:secret-token-2").status == 0)
        #expect(try h.lsopen("nothing:secret-token-3").status == 66)
        let run = try h.lsctl("history", "--json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stdout.contains("secret-token"), "no URL text: \(run.stdout)")
        let entries = try run.decode([HistoryEntry].self)
        #expect(entries.map(\.outcome) == ["opened", "opened", "noHandler"])
        #expect(entries.map(\.scheme) == ["alpha", "alpha", "nothing"])
        #expect(entries.map(\.launchState) == ["cold", "hot", nil])
        #expect(entries[0].app == "test.alpha")
        #expect(entries[0].source == "org.swift-launch-services.lsopen")
        #expect(entries[0].phasesMs.keys.sorted() == ["didFinishLaunching", "launch", "openURL", "willFinishLaunching"])
        #expect((entries[0].totalMs ?? 0) > 0)
        let last = try h.lsctl("history", "-n", "1", "--json").decode([HistoryEntry].self)
        #expect(last.map(\.scheme) == ["nothing"])
        let text = try h.lsctl("history")
        #expect(text.stdout.contains("→ alpha: in test.alpha  opened (cold)"), "\(text.stdout)")
    }
}
