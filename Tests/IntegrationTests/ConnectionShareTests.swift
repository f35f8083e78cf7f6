import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// The user's connections are shared: no one process, and no one app with the processes it
/// started, can take them all, and a few are kept for processes that hold none, so the
/// user's next `lsopen` or `lsctl` connects while a flood goes on.
@Suite("Connection shares")
struct ConnectionShareTests {
    /// What became of one connection of the test process: greeted, or refused with a reason.
    enum Outcome {
        case held(FrameConnection)
        case refused(OpenError?)
    }

    /// Connects and says hello; the daemon answers `welcome` or a last `failure`.
    static func connect(_ h: DaemonHarness) throws -> Outcome {
        let connection = try FrameConnection.connect(path: h.socket)
        do {
            try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "share-test")))
            let answer = try connection.receive(waitingFor: "welcome or a refusal", deadline: .now + .seconds(10))
            switch answer.message {
            case .welcome: return .held(connection)
            case .failure(let error):
                connection.close()
                return .refused(error)
            default:
                connection.close()
                return .refused(nil)
            }
        } catch {
            connection.close()
            return .refused(nil)
        }
    }

    /// Starts `lsopen ARGUMENTS` in the background (it holds one connection while it waits).
    static func startLSOpen(_ h: DaemonHarness, _ arguments: [String], output: String) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        return try ChildProcess(DaemonHarness.binary("lsopen"), arguments, environment: environment, stdout: output)
    }

    /// How many opens of `prefix…` the test apps received.
    static func delivered(_ h: DaemonHarness, _ prefix: String) -> Int {
        h.eventNames().filter { $0.hasPrefix("open url=" + prefix) }.count
    }

    @Test("one process holding the user's whole allowance gets its share (connections.maximumPerProcess); lsopen and lsctl of other processes are served")
    func oneProcessFloods() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        var held: [FrameConnection] = []
        var refused: [OpenError?] = []
        defer { held.forEach { $0.close() } }
        // As many as the user may hold in all (connections.maximumPerUser, 256).
        for _ in 0..<256 {
            switch try Self.connect(h) {
            case .held(let connection): held.append(connection)
            case .refused(let error): refused.append(error)
            }
        }
        #expect(held.count == 64, "one process holds its share, connections.maximumPerProcess: \(held.count)")
        #expect(refused.count == 192)
        #expect(refused.allSatisfy { $0?.code == .unavailable && $0?.message.contains("connections.maximumPerProcess") == true },
                "refused by name: \(refused.prefix(3))")
        // Other processes, meanwhile, are served.
        let open = try h.lsopen("--json", "alpha:while-flooded", timeout: 30)
        #expect(open.status == 0, "\(open.stdout) \(open.stderr)")
        let status = try h.lsctl("status", timeout: 30)
        #expect(status.status == 0, "\(status.stdout) \(status.stderr)")
        let log = h.daemonOutput
        #expect(log.components(separatedBy: "limit connections.maximumPerProcess reached").count - 1 == 1, "logged once, not per refusal")
    }

    @Test("an app and the processes it starts share one app's share (connections.maximumPerApp); the user is served meanwhile")
    func oneAppFloods() throws {
        let out = try TemporaryFolder(prefix: "lsshare").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let lsopen = DaemonHarness.binary("lsopen")
        // The app's shell starts five waiting `lsopen`s (one connection each, each its own
        // process) and waits for them: they descend from the app, and speak as it.
        let script = "cd \(out) && for i in 1 2 3 4 5; do \(lsopen) --wait --json --timeout 60 'quiet://x-callback-url/hold?n='$i >$i.json 2>&1 & echo $! >>pids; done; wait"
        let h = try DaemonHarness(apps: [.test("holder", "--child-run=\(script)"), .test("quiet")],
                                  config: #"{"deadlines": {"didFinishLaunching": 120}, "connections": {"maximumPerApp": 3}}"#)
        defer { h.stop() }
        let trigger = try Self.startLSOpen(h, ["holder:go"], output: h.root + "/trigger.log")
        defer { trigger.stop(grace: 5) }
        defer {
            // The waiting lsopens, by PID.
            let pids = ((try? String(contentsOfFile: out + "/pids", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
            for pid in pids where isAlive(pid) { kill(pid, SIGTERM) }
        }
        func refusals() -> [String] {
            (1...5).compactMap { try? String(contentsOfFile: out + "/\($0).json", encoding: .utf8) }.filter { $0.contains("connections.maximumPerApp") }
        }
        try h.eventually("three of the app's processes hold a connection and two are refused", within: 60) {
            Self.delivered(h, "quiet://x-callback-url/hold") == 3 && refusals().count == 2
        }
        #expect(refusals().allSatisfy { $0.contains("test.holder") && $0.contains("unavailable") }, "\(refusals())")
        // The user's tools are served while the app holds its whole share.
        #expect(try h.lsopen("quiet:from-the-user").status == 0)
        #expect(try h.lsctl("status").status == 0)
        #expect(h.daemonOutput.contains("limit connections.maximumPerApp reached"))
    }

    @Test("the user's limit still holds across processes, and its last connections are kept for processes that hold none")
    func userLimitAndReserve() throws {
        let h = try DaemonHarness(apps: [.test("quiet")],
                                  config: #"{"connections": {"maximumPerUser": 8, "maximumPerProcess": 4, "reservedForFirstConnections": 2}}"#)
        defer { h.stop() }
        var held: [FrameConnection] = []
        defer { held.forEach { $0.close() } }
        var waiters: [ChildProcess] = []
        defer { waiters.forEach { $0.stop(grace: 5) } }
        func wait(_ n: Int) throws {
            let waiter = try Self.startLSOpen(h, ["--wait", "--timeout", "60", "quiet://x-callback-url/wait?n=\(n)"], output: h.root + "/waiter-\(n).log")
            waiters.append(waiter)
        }
        // This process holds 3 (under its 4), three other processes 1 each: 6 of 8.
        for _ in 0..<3 {
            guard case .held(let connection) = try Self.connect(h) else { Issue.record("refused below every limit"); return }
            held.append(connection)
        }
        for n in 1...3 { try wait(n) }
        try h.eventually("three waiting lsopens hold a connection each", within: 30) { Self.delivered(h, "quiet://x-callback-url/wait") == 3 }

        // The last 2 are kept for processes that hold none: this one, holding 3, is refused.
        guard case .refused(let error) = try Self.connect(h) else { Issue.record("a fourth connection was taken from the reserve"); return }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("connections.reservedForFirstConnections") == true, "\(String(describing: error))")
        // A process that holds none gets one.
        let status = try h.lsctl("status")
        #expect(status.status == 0, "\(status.stdout) \(status.stderr)")

        // Two more processes take the reserve: 8 of 8, and the next is refused by the user's limit.
        for n in 4...5 { try wait(n) }
        try h.eventually("five waiting lsopens hold a connection each", within: 30) { Self.delivered(h, "quiet://x-callback-url/wait") == 5 }
        let full = try h.lsctl("status")
        #expect(full.status != 0)
        #expect((full.stdout + full.stderr).contains("connections.maximumPerUser"), "\(full.stdout) \(full.stderr)")
        // One leaves; a new process is served again.
        waiters[0].stop(grace: 5)
        try h.eventually("a freed connection is taken again") { (try? h.lsctl("status").status) == 0 }
    }
}
