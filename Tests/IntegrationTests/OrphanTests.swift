import Foundation
import LaunchServicesTesting
import Testing

/// Nothing the daemon started outlives it, even when it is killed outright (SIGKILL: no
/// shutdown runs, no connection is closed on purpose). A suspended app cannot act on a
/// catchable signal, and an app that has not reached `Application.main` has armed nothing
/// itself, so the death signal must come from the spawn and must be SIGKILL.
@Suite("No orphans")
struct OrphanTests {
    /// The process state letter from /proc (`T` = stopped), or nil when it is gone.
    func processState(_ pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    @Test("SIGKILL the daemon: a suspended app, an active one and one hanging before Application.main all die within 2 s")
    func sigkilledDaemonLeavesNoApp() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta"), .test("gamma", "--launch=hang")],
                                  config: #"{"backgroundGraceSeconds": 0.3, "deadlines": {"launch": 60}}"#)
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        #expect(try h.lsopen("beta:1").status == 0)
        try h.eventually("alpha is suspended") { try h.state(of: "test.alpha") == "suspended" }
        let alpha = try #require(try h.running().first { $0.id == "test.alpha" }?.pid)
        try h.eventually("alpha's process is stopped") { processState(alpha) == "T" }

        // gamma hangs before it ever calls Application.main; its open waits for the launch.
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        let pending = try ChildProcess(DaemonHarness.binary("lsopen"), ["gamma:1"], environment: environment, stdout: h.root + "/gamma.out", stderr: h.root + "/gamma.out")
        defer { pending.stop(grace: 1) }
        try h.eventually("gamma hangs before Application.main") { h.eventNames().contains("launch -> hang") }

        let listed = try h.running().compactMap(\.pid)
        let pids = Set(h.appPIDs + listed)
        #expect(pids.count == 3, "alpha, beta and gamma: \(h.events)")
        #expect(pids.allSatisfy(isAlive))

        kill(h.daemonPID, SIGKILL)
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline && pids.contains(where: isAlive) { usleep(10_000) }
        let survivors = pids.filter(isAlive).sorted().map { "\($0) (state \(processState($0).map(String.init) ?? "?"))" }
        #expect(survivors.isEmpty, "outlived the SIGKILLed daemon: \(survivors)")
    }
}
