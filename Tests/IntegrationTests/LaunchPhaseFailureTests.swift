import Foundation
import Testing

/// Vetoes, refusals, crashes, exits and hangs in every phase, with real app processes.
/// Deadlines are short here so a hung app is found quickly; the healthy launch phase keeps
/// a long deadline so a loaded machine does not turn a slow start into a failure.
@Suite("Launch phase failures")
struct LaunchPhaseFailureTests {
    static let shortDeadlines = """
    {"deadlines": {"launch": 20, "willFinishLaunching": 1, "didFinishLaunching": 1, "openURL": 1}, "shutdownGraceSeconds": 1}
    """

    /// Both ways the launch methods reach the app: written at spawn (the default) or sent
    /// when each phase begins.
    static let bothModes = [true, false]

    /// A configuration with `prewriteLaunchMethods` set, plus `settings` (JSON members).
    static func config(prewrite: Bool, _ settings: String? = nil) -> String {
        "{" + (settings.map { $0 + ", " } ?? "") + "\"prewriteLaunchMethods\": \(prewrite)}"
    }

    static let shortDeadlineSettings = """
    "deadlines": {"launch": 20, "willFinishLaunching": 1, "didFinishLaunching": 1, "openURL": 1}, "shutdownGraceSeconds": 1
    """

    @Test("NO from a launch method: vetoed, naming the method; the URL is not delivered", arguments: [
        ("--will-finish=no", "willFinishLaunching"), ("--did-finish=no", "didFinishLaunching"),
    ], bothModes)
    func veto(behavior: (String, String), prewrite: Bool) throws {
        let (behavior, phase) = behavior
        let h = try DaemonHarness(apps: [.test("picky", behavior)], config: Self.config(prewrite: prewrite))
        defer { h.stop() }
        let r = try h.lsopen("--json", "picky:secret")
        #expect(r.status == 67)
        #expect(r.errorCode == "vetoed")
        #expect(r.errorPhase == phase)
        #expect(r.errorMessage?.contains(phase) == true)
        // The app still finishes launching, as on iOS, and is frontmost.
        try h.eventually("the app becomes active") { h.eventNames().contains("didBecomeActive") }
        // A later open reaches the same app after anything queued for it before, so once it
        // has arrived, a delivery of the vetoed URL would have arrived too.
        #expect(try h.lsopen("picky:later").status == 0)
        let names = h.eventNames()
        #expect(names.contains { $0.hasPrefix("open url=picky:later") })
        #expect(!names.contains { $0.hasPrefix("open url=picky:secret") }, "the vetoed URL must not be delivered: \(names)")
        #expect(names.contains { $0.hasPrefix("didFinishLaunching url=picky:secret") })
    }

    @Test("open returning NO: notHandled")
    func openReturnsNo() throws {
        let h = try DaemonHarness(apps: [.test("refuser", "--open=no")])
        defer { h.stop() }
        let r = try h.lsopen("--json", "refuser:x")
        #expect(r.status == 67)
        #expect(r.errorCode == "notHandled")
        #expect(r.errorPhase == "openURL")
    }

    @Test("a crash in each phase: crashed, naming the phase and the signal; state cleaned up", arguments: [
        ("--launch=crash", "launch"), ("--will-finish=crash", "willFinishLaunching"),
        ("--did-finish=crash", "didFinishLaunching"), ("--open=crash", "openURL"),
    ], bothModes)
    func crash(behavior: (String, String), prewrite: Bool) throws {
        let (behavior, phase) = behavior
        let h = try DaemonHarness(apps: [.test("crasher", behavior)], config: Self.config(prewrite: prewrite))
        defer { h.stop() }
        let r = try h.lsopen("--json", "crasher:x")
        #expect(r.status == 68)
        #expect(r.errorCode == "crashed")
        #expect(r.errorPhase == phase)
        #expect(r.errorMessage?.contains("SIGSEGV") == true, "\(r.errorMessage ?? "")")
        let pid = try #require(h.appPIDs.first)
        try h.eventually("the crashed app is gone") { !isAlive(pid) }
        #expect(try h.running().isEmpty)
        // The next open launches it afresh.
        let again = try h.lsopen("--json", "crasher:y")
        #expect(again.errorCode == "crashed")
        #expect(h.appPIDs.count == 2)
    }

    @Test("an exit in a phase: crashed, with the exit status")
    func exitInPhase() throws {
        let h = try DaemonHarness(apps: [.test("quitter", "--did-finish=exit")])
        defer { h.stop() }
        let r = try h.lsopen("--json", "quitter:x")
        #expect(r.status == 68)
        #expect(r.errorCode == "crashed")
        #expect(r.errorPhase == "didFinishLaunching")
        #expect(r.errorMessage?.contains("exited with status 3") == true)
    }

    @Test("a hang in a launch phase: timeout naming the phase, and the app is terminated", arguments: [
        "willFinishLaunching", "didFinishLaunching",
    ], bothModes)
    func hangInLaunchPhase(phase: String, prewrite: Bool) throws {
        let flag = phase == "willFinishLaunching" ? "--will-finish=hang" : "--did-finish=hang"
        let h = try DaemonHarness(apps: [.test("sleeper", flag)], config: Self.config(prewrite: prewrite, Self.shortDeadlineSettings))
        defer { h.stop() }
        let started = Date()
        let r = try h.lsopen("--json", "sleeper:x", timeout: 30)
        let elapsed = Date().timeIntervalSince(started)
        #expect(r.status == 68)
        #expect(r.errorCode == "timeout")
        #expect(r.errorPhase == phase)
        #expect(r.errorMessage?.contains("within 1 s") == true)
        // Bounded, not timed: the answer comes from the deadline, not from lsopen's own timeout.
        #expect(elapsed < 15, "answered after \(elapsed) s")
        let pid = try #require(h.appPIDs.first)
        try h.eventually("the hung app is terminated") { !isAlive(pid) }
        try h.eventually("its state is cleaned up") { try h.running().isEmpty }
    }

    @Test("a hang in openURL: timeout, the hung app is terminated, and the next open gets a fresh copy at once")
    func hangInOpen() throws {
        let h = try DaemonHarness(apps: [.test("slow", "--open=hang-first")], config: """
            {"deadlines": {"openURL": 3}}
            """)
        defer { h.stop() }
        let r = try h.lsopen("--json", "slow:x", timeout: 30)
        #expect(r.errorCode == "timeout")
        #expect(r.errorPhase == "openURL")
        #expect(r.errorMessage?.contains("it was terminated") == true, "\(r.errorMessage ?? "")")
        let hung = try #require(h.appPIDs.first)
        try h.eventually("the hung app is terminated") { !isAlive(hung) }
        // The next open does not wait out another deadline on the hung process: a fresh
        // copy answers. (Bounded by lsopen's own timeout, below the 3 s deadline.)
        let next = try h.lsopen("--json", "--timeout", "2.5", "slow:y", timeout: 30)
        #expect(next.status == 0, "\(next.stdout) \(next.stderr)")
        #expect(next.json?["launched"] as? Bool == true)
        #expect(h.appPIDs.count == 2 && h.appPIDs.last != hung)
    }

    @Test("a hang before check-in: timeout in launch")
    func hangBeforeCheckIn() throws {
        let h = try DaemonHarness(apps: [.test("stuck", "--launch=hang")], config: """
            {"deadlines": {"launch": 1}}
            """)
        defer { h.stop() }
        let r = try h.lsopen("--json", "stuck:x", timeout: 30)
        #expect(r.errorCode == "timeout")
        #expect(r.errorPhase == "launch")
        let pid = try #require(h.appPIDs.first)
        try h.eventually("the app is terminated") { !isAlive(pid) }
    }

    @Test("an executable that cannot be started: launchFailed, naming the cause")
    func launchFailed() throws {
        let h = try DaemonHarness(apps: [.test("broken")])
        defer { h.stop() }
        // Registered while valid; then the executable is replaced by a non-executable file.
        let executable = h.appsFolder + "/broken.app/lstestapp"
        try FileManager.default.removeItem(atPath: executable)
        try "not a program".write(toFile: executable, atomically: true, encoding: .utf8)
        let r = try h.lsopen("--json", "broken:x")
        #expect(r.status == 68)
        #expect(r.errorCode == "launchFailed")
        #expect(r.errorMessage?.contains("is not executable") == true, "\(r.errorMessage ?? "")")
        // Replaced by a symbolic link out of the bundle: refused at launch, not run.
        try FileManager.default.removeItem(atPath: executable)
        try FileManager.default.createSymbolicLink(atPath: executable, withDestinationPath: DaemonHarness.binary("lstestapp"))
        let escaped = try h.lsopen("--json", "broken:y")
        #expect(escaped.errorCode == "launchFailed")
        #expect(escaped.errorMessage?.contains("outside the bundle") == true, "\(escaped.errorMessage ?? "")")
        #expect(h.appPIDs.isEmpty, "nothing was started")
    }

    @Test("queued opens behind a hung launch are each answered")
    func queueBehindHang() throws {
        let h = try DaemonHarness(apps: [.test("sleeper", "--did-finish=hang")], config: Self.shortDeadlines)
        defer { h.stop() }
        let results = ResultBox()
        DispatchQueue.concurrentPerform(iterations: 3) { i in
            let r = try? h.lsopen("--json", "sleeper:\(i)", timeout: 60)
            results.append(r?.errorCode == "timeout" ? 1 : 0)
        }
        #expect(results.values == [1, 1, 1])
    }
}
