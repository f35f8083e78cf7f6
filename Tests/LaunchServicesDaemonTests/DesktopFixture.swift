import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A private folder with a `bin` on PATH for handler scripts, a `records` folder where
/// they write their argv (NUL-separated, `PID.args`) and environment (`PID.env`), and a
/// launcher per call on a loop of its own.
final class DesktopFixture: Sendable {
    let root: String
    var bin: String { root + "/bin" }
    var records: String { root + "/records" }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let logLines = NIOLockedValueBox<[String]>([])
    /// The last launcher made: `running` and `waitUntilNotRunning` ask it.
    private let current = NIOLockedValueBox<NIOLoopBound<DesktopLauncher>?>(nil)

    init() throws {
        root = try TemporaryFolder(prefix: "ls-desktop").path
        try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/records", withIntermediateDirectories: true)
        // The few programs the handlers use, so PATH holds nothing else (no terminal emulator
        // the machine may have installed).
        try FileManager.default.createDirectory(atPath: root + "/tools", withIntermediateDirectories: true)
        for tool in ["mv", "env", "sleep", "touch", "cat"] {
            guard let path = ["/usr/bin/" + tool, "/bin/" + tool].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { continue }
            try FileManager.default.createSymbolicLink(atPath: root + "/tools/" + tool, withDestinationPath: path)
        }
    }

    /// A handler: records itself, then runs `body` (sh).
    func handler(_ name: String, _ body: String) throws {
        let script = """
            #!/bin/sh
            printf '%s\\0' "$@" > "$RECORD_DIR/$$.args.part" && mv "$RECORD_DIR/$$.args.part" "$RECORD_DIR/$$.args"
            printf '%s\\0' "$@" > "$RECORD_DIR/\(name).argv"
            env > "$RECORD_DIR/$$.env"
            \(body)

            """
        try writeFile(script, to: bin + "/" + name)
        chmod(bin + "/" + name, 0o755)
    }

    var environment: [String: String] {
        ["PATH": bin + ":" + root + "/tools", "RECORD_DIR": records, "HOME": root, "NOTIFY_SOCKET": "/nowhere", "LISTEN_FDS": "1"]
    }

    /// Launches on a new launcher and waits (at most 60 s) for the outcomes. Output goes to
    /// log files in `root/logs` unless another is given.
    func launch(_ request: DesktopLaunchRequest, grace: Duration = .seconds(1), settle: Duration = .seconds(30), settings: DesktopLaunchSettings = DesktopLaunchSettings(),
                output: AppOutput? = nil, environment extra: [String: String] = [:]) async throws -> [DesktopLaunchOutcome] {
        let launcher = try await makeLauncher(grace: grace, settle: settle, settings: settings, output: output, environment: extra)
        return try await launch(request, on: launcher)
    }

    /// A launcher on the fixture's loop; the fixture's `running()` asks the last one made.
    func makeLauncher(grace: Duration = .seconds(1), settle: Duration = .seconds(30), settings: DesktopLaunchSettings = DesktopLaunchSettings(),
                      output: AppOutput? = nil, environment extra: [String: String] = [:]) async throws -> NIOLoopBound<DesktopLauncher> {
        // Output to files by default, so the handlers' lines stay out of the test's own.
        let output = output ?? .files(folder: root + "/logs", maximumBytes: 1 << 20)
        var chosen = settings
        chosen.grace = grace
        chosen.stderrSettle = settle
        let settings = chosen
        let environment = self.environment.merging(extra) { $1 }
        let logLines = self.logLines
        let loop = group.next()
        let bound = try await loop.submit {
            NIOLoopBound(DesktopLauncher(loop: loop, settings: settings, output: output, environment: environment,
                                         logger: Logger(label: "desktop-tests") { _ in RecordingLogHandler(lines: logLines, logLevel: .debug) }),
                         eventLoop: loop)
        }.get()
        current.withLockedValue { $0 = bound }
        return bound
    }

    /// Launches on `launcher` and waits (at most 60 s) for the outcomes.
    func launch(_ request: DesktopLaunchRequest, on bound: NIOLoopBound<DesktopLauncher>) async throws -> [DesktopLaunchOutcome] {
        guard let outcomes = try await start(request, on: bound).get() else {
            throw ProcessError("no outcome within 60 s for \(request.desktopID)")
        }
        return outcomes
    }

    /// Launches on `launcher`; the future holds the outcomes, or `nil` after 60 s without them.
    func start(_ request: DesktopLaunchRequest, on bound: NIOLoopBound<DesktopLauncher>) -> EventLoopFuture<[DesktopLaunchOutcome]?> {
        let loop = bound.eventLoop
        let promise = loop.makePromise(of: [DesktopLaunchOutcome]?.self)
        loop.execute {
            let answered = NIOLoopBoundBox(false, eventLoop: loop)
            let timeout = loop.scheduleTask(in: .seconds(60)) {
                guard !answered.value else { return }
                answered.value = true
                promise.succeed(nil)
            }
            bound.value.launch(request) { outcomes in
                guard !answered.value else { return }
                answered.value = true
                timeout.cancel()
                promise.succeed(outcomes)
            }
        }
        return promise.futureResult
    }

    func running() async throws -> [RunningDesktopApp] {
        guard let bound = current.withLockedValue({ $0 }) else { return [] }
        return try await bound.eventLoop.submit { bound.value.runningApps }.get()
    }

    func waitUntilNotRunning(_ pid: Int32) async throws {
        for _ in 0..<600 {
            if try await !running().contains(where: { $0.pid == pid }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessError("pid \(pid) still listed as running after 30 s")
    }

    func recordedPIDs() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []
        return names.compactMap { $0.hasSuffix(".args") ? Int32($0.dropLast(5)) : nil }.sorted()
    }

    /// What `pid` recorded as its arguments (waits up to 30 s for the record).
    func arguments(of pid: Int32) throws -> [String] {
        let path = records + "/\(pid).args"
        try waitFor("the record of \(pid)") { FileManager.default.fileExists(atPath: path) }
        return try Self.split(Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The last argv a handler named `name` recorded.
    func record(of name: String) throws -> [String] {
        try Self.split(Data(contentsOf: URL(fileURLWithPath: records + "/" + name + ".argv")))
    }

    static func split(_ data: Data) -> [String] {
        data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    func environment(of pid: Int32) throws -> [String: String] {
        _ = try arguments(of: pid)
        let path = records + "/\(pid).env"
        try waitFor("the environment of \(pid)") { ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").hasSuffix("\n") }
        var environment: [String: String] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return environment
    }

    /// Ends processes a test started, by PID, and waits (bounded) until they are gone.
    func kill(_ pids: [Int32]) {
        for pid in pids { Glibc.kill(pid, SIGKILL) }
        for pid in pids { try? waitFor("pid \(pid) to end") { !isAlive(pid) } }
    }

    func remove() {
        try? group.syncShutdownGracefully()
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// Polls `condition` every 20 ms until it holds, or throws naming `what` after `seconds`.
func waitFor(_ what: String, within seconds: Double = 30, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return }
        // Looked at once more after the deadline, in case this thread was not run meanwhile.
        guard Date() < deadline else { break }
        usleep(20_000)  // a test thread polling files; no event loop waits, bounded by the deadline
    }
    throw ProcessError("timed out after \(seconds) s waiting for \(what)")
}

/// Whether `pid` runs (a zombie counts as gone).
func isAlive(_ pid: Int32) -> Bool {
    guard Glibc.kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(close, offsetBy: 2)]
    return state != "Z" && state != "X"
}
