import Foundation
import Testing
import LaunchServicesProtocol

/// Suspension with real processes: a background app is stopped after the grace, the next open
/// resumes it, and past the live limit the least recently used suspended app is killed.
@Suite("Background suspension")
struct BackgroundLifecycleTests {
    /// The process state letter from /proc (`T` = stopped, `S`/`R` = running).
    func processState(_ pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    func pid(_ h: DaemonHarness, _ id: String) throws -> Int32? {
        try h.running().first { $0.id == id }?.pid
    }

    @Test("suspended after the grace (the process is stopped), resumed by the next open")
    func suspendAndResume() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")], config: #"{"backgroundGraceSeconds": 0.3}"#)
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        #expect(try h.lsopen("beta:1").status == 0)
        let alpha = try #require(try pid(h, "test.alpha"))
        try h.eventually("alpha is suspended") { try h.state(of: "test.alpha") == "suspended" }
        try h.eventually("alpha's process is stopped") { processState(alpha) == "T" }
        #expect(h.daemonOutput.contains("suspending test.alpha (pid \(alpha))"))
        #expect(try h.lsctl("status", "--json").decode(StatusReport.self).appsSuspended == 1)
        #expect(try h.lsctl("status").stdout.contains("running:    2, 1 suspended"))

        let warm = try h.lsopen("--json", "alpha:2")
        #expect(warm.status == 0, "\(warm.stdout)")
        #expect(warm.json?["launched"] as? Bool == false, "the same process, resumed")
        #expect(try pid(h, "test.alpha") == alpha)
        #expect(processState(alpha) != "T")
        #expect(try h.state(of: "test.alpha") == "active")
        #expect(h.eventNames(pid: alpha).suffix(4).map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["willEnterForeground", "didBecomeActive", "open", "open"])
        // beta went to the background in turn and is suspended after its own grace.
        try h.eventually("beta is suspended in turn") { try h.state(of: "test.beta") == "suspended" }
    }

    @Test("past maximumLiveApps the least recently used suspended app is terminated")
    func evictLeastRecentlyUsed() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta"), .test("gamma")],
                                  config: #"{"backgroundGraceSeconds": 0.3, "maximumLiveApps": 2}"#)
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        #expect(try h.lsopen("beta:1").status == 0)
        try h.eventually("alpha is suspended") { try h.state(of: "test.alpha") == "suspended" }
        let alpha = try #require(h.appPIDs.first)
        #expect(try h.lsopen("gamma:1").status == 0)
        try h.eventually("alpha, the least recently used suspended app, is terminated") { !isAlive(alpha) }
        try h.eventually("the daemon noticed") { try h.state(of: "test.alpha") == nil }
        #expect(h.daemonOutput.contains("terminating test.alpha (pid \(alpha)): more than 2 apps are alive and it is the least recently used suspended one"))
        let running = try h.running().map(\.id)
        #expect(running == ["test.beta", "test.gamma"])
        // Opening alpha again is a cold open; beta (now the oldest suspended) makes room.
        let again = try h.lsopen("--json", "alpha:2")
        #expect(again.json?["launched"] as? Bool == true)
    }

    @Test("stopping the daemon ends suspended apps too")
    func shutdownWithSuspendedApps() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")], config: #"{"backgroundGraceSeconds": 0.3, "shutdownGraceSeconds": 5}"#)
        #expect(try h.lsopen("alpha:1").status == 0)
        #expect(try h.lsopen("beta:1").status == 0)
        try h.eventually("alpha is suspended") { try h.state(of: "test.alpha") == "suspended" }
        let pids = h.appPIDs
        let started = Date()
        h.stop()
        #expect(pids.allSatisfy { !isAlive($0) })
        #expect(Date().timeIntervalSince(started) < 4, "the suspended app was resumed and exited, not killed after the grace")
    }
}
