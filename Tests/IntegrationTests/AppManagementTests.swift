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

    @Test("unregister of a running app quits it as lsctl quit does, and says so; of an idle one, only unregisters")
    func unregisterRunningApp() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")])
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        let pid = try #require(try h.running().first { $0.id == "test.alpha" }?.pid)
        let unregister = try h.lsctl("unregister", "test.alpha", "--json")
        #expect(unregister.status == 0, "\(unregister.stderr)")
        let report = try unregister.decode(UnregisterReport.self)
        #expect(report.quitting == pid, "\(unregister.stdout)")
        try h.eventually("the unregistered app has exited") { !isAlive(pid) }
        #expect(h.eventNames(pid: pid).contains("willTerminate"), "it ended the way lsctl quit ends an app")
        try h.eventually("it is no longer listed as running") { try h.state(of: "test.alpha") == nil }
        #expect(try h.lsopen("alpha:2").status == 66, "its scheme opens in no app now")
        let idle = try h.lsctl("unregister", "test.beta")
        #expect(idle.status == 0)
        #expect(!idle.stdout.contains("quitting"), "\(idle.stdout)")
        let text = try h.lsctl("register", h.appsFolder + "/alpha.app")
        #expect(text.status == 0, "\(text.stderr)")
        #expect(try h.lsopen("alpha:3").status == 0, "registered again, it launches afresh")
        let running = try #require(try h.running().first { $0.id == "test.alpha" }?.pid)
        let quitText = try h.lsctl("unregister", "test.alpha")
        #expect(quitText.stdout.contains("it was running (pid \(running)): quitting it"), "\(quitText.stdout)")
        try h.eventually("the second copy has exited too") { !isAlive(running) }
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

    @Test("history records every open it answered: invalid URLs, refusals, and opens whose caller left (ended later, or withdrawn)")
    func historyRecordsEveryAnswer() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta"), .test("slow", "--will-finish=hang")],
                                  config: #"{"deadlines": {"willFinishLaunching": 2}}"#)
        defer { h.stop() }
        #expect(try h.lsopen("alpha:bad url").status == 65)
        #expect(try h.lsopen("alpha:x?x-success=beta:back").status == 67, "a callback into another app is refused")
        // A caller that gives up while the app launches (the launch ends later, in a timeout),
        // and one whose open waits behind that launch (it never reaches the app).
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        let launching = try ChildProcess(DaemonHarness.binary("lsopen"), ["slow:1"], environment: environment, stdout: h.root + "/first.out")
        defer { launching.stop() }
        try h.eventually("slow hangs in willFinishLaunching") { h.eventNames().contains("willFinishLaunching -> hang") }
        let queued = try ChildProcess(DaemonHarness.binary("lsopen"), ["slow:2"], environment: environment, stdout: h.root + "/second.out")
        defer { queued.stop() }
        try h.eventually("the second open waits behind the launch") { try h.running().first { $0.id == "test.slow" }?.pendingOpens == 2 }
        queued.stop()
        launching.stop()

        var entries: [HistoryEntry] = []
        try h.eventually("the launch ends after its caller left", within: 20) {
            entries = try h.lsctl("history", "--json").decode([HistoryEntry].self)
            return entries.contains { $0.outcome == "timeout" }
        }
        #expect(entries.map(\.outcome) == ["invalidURL", "notPermitted", "withdrawn", "timeout"], "\(entries)")
        #expect(entries.map(\.scheme) == ["alpha", "alpha", "slow", "slow"])
        #expect(entries.map(\.callerLeft) == [nil, nil, true, true])
        #expect(entries[2].app == "test.slow" && entries[3].app == "test.slow")
        #expect(entries[3].launchState == "cold")
        let text = try h.lsctl("history").stdout
        #expect(text.contains("→ slow: in test.slow  withdrawn"), "\(text)")
        #expect(text.contains("→ slow: in test.slow  timeout (cold) after the caller left"), "\(text)")
        #expect(text.contains("→ alpha: in -  invalidURL"), "\(text)")
    }
}
