import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// An app bundle for a test: the test app (`lstestapp`) with a behaviour, or a demo app.
struct TestApp {
    var folder: String
    var id: String
    var schemes: [String]
    var queriesSchemes: [String] = []
    /// Lines of the bundle's `test-behavior` file (lstestapp arguments).
    var behavior: [String] = []
    /// The built executable the bundle runs.
    var executable = "lstestapp"
    /// A raw Info.plist to use instead of the generated one (bad-input tests).
    var rawPlist: String?

    static func test(_ name: String, schemes: [String]? = nil, _ behavior: String...) -> TestApp {
        TestApp(folder: name, id: "test.\(name)", schemes: schemes ?? [name], behavior: behavior)
    }

    /// A demo app as the repository ships it: its `config/apps/NAME/Info.plist` and executable.
    static func demo(_ name: String) throws -> TestApp {
        let plist = try String(contentsOfFile: repositoryRoot + "/config/apps/\(name)/Info.plist", encoding: .utf8)
        guard let start = plist.range(of: "<key>CFBundleIdentifier</key>"),
              let open = plist.range(of: "<string>", range: start.upperBound..<plist.endIndex),
              let close = plist.range(of: "</string>", range: open.upperBound..<plist.endIndex) else {
            throw HarnessError("config/apps/\(name)/Info.plist has no CFBundleIdentifier")
        }
        return TestApp(folder: name, id: String(plist[open.upperBound..<close.lowerBound]), schemes: [], executable: name, rawPlist: plist)
    }

    static let repositoryRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    var plist: String {
        rawPlist ?? BundleFiles.infoPlist(id: id, executable: executable, schemes: schemes, queriesSchemes: queriesSchemes)
    }
}

/// The integration tests' reading of a tool's output (ToolRun, ChildProcess.run: LaunchServicesTesting).
extension ToolRun {
    var json: [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
    }
    /// stdout as one of the daemon's reports (`lsctl … --json` prints the daemon's JSON verbatim).
    func decode<Report: Decodable>(_ report: Report.Type) throws -> Report {
        do {
            return try JSONDecoder().decode(report, from: Data(stdout.utf8))
        } catch {
            throw HarnessError("the output is not a \(report) (\(error)); exit status \(status); stdout: \(stdout) stderr: \(stderr)")
        }
    }
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
    var errorPhase: String? { (json?["error"] as? [String: Any])?["phase"] as? String }
    var errorMessage: String? { (json?["error"] as? [String: Any])?["message"] as? String }
}

/// A private daemon with its own socket, apps folder and state, started as a real process
/// from the built executables, and stopped (by PID) with everything it launched.
final class DaemonHarness: @unchecked Sendable {
    let root: String
    let socket: String
    let appsFolder: String
    let eventLog: String
    let daemonLog: String
    private var daemon: DaemonProcess?
    private var daemonArguments: [String] = []
    /// Variables added to the daemon's environment (e.g. `NOTIFY_SOCKET`).
    private let extraEnvironment: [String: String]

    /// Where `swift build` put the executables: `$LS_BIN_DIR`, else beside the test bundle.
    static let binDirectory: String = {
        if let dir = ProcessInfo.processInfo.environment["LS_BIN_DIR"], !dir.isEmpty { return dir }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("lsopen").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }()

    static func binary(_ name: String) -> String { binDirectory + "/" + name }

    /// Puts a built executable into a bundle as a real file: a hard link (cheap), or a copy
    /// across file systems. A symbolic link would point out of the bundle, which the daemon
    /// refuses (an app's executable must live inside its bundle).
    static func placeExecutable(_ name: String, at path: String) throws {
        try BundleFiles.placeExecutable(binary(name), at: path)
    }

    init(apps: [TestApp], config: String? = nil, extraArguments: [String] = [], environment: [String: String] = [:]) throws {
        extraEnvironment = environment
        root = try TemporaryFolder(prefix: "lsit").path
        socket = root + "/socket"
        appsFolder = root + "/apps"
        eventLog = root + "/events.log"
        daemonLog = root + "/daemon.log"
        let fm = FileManager.default
        for tool in ["launchservicesd", "lsopen", "lsctl", "lstestapp"] where !fm.isExecutableFile(atPath: Self.binary(tool)) {
            throw HarnessError("\(Self.binary(tool)) is missing: run `swift build` (scripts/test does) before the integration tests")
        }
        try fm.createDirectory(atPath: appsFolder, withIntermediateDirectories: true)
        for app in apps { try install(app) }
        var arguments = ["--apps", appsFolder, "--state", root + "/state", "--log-level", "debug"]
        if let config {
            try config.write(toFile: root + "/config.json", atomically: true, encoding: .utf8)
            arguments += ["--config", root + "/config.json"]
        }
        arguments += extraArguments
        daemonArguments = arguments
        daemon = try startDaemon()
    }

    /// Starts the daemon and waits at most `within` seconds for it to serve its socket.
    private func startDaemon(within seconds: TimeInterval = 15) throws -> DaemonProcess {
        try DaemonProcess(executable: Self.binary("launchservicesd"), socket: socket, arguments: daemonArguments,
                          environment: daemonEnvironment, log: daemonLog, timeout: seconds)
    }

    /// Writes one bundle into the apps folder (or into `folder`, another apps folder).
    func install(_ app: TestApp, in folder: String? = nil) throws {
        let bundle = (folder ?? appsFolder) + "/" + app.folder + ".app"
        let executable = Self.binary(app.executable)
        try BundleFiles.write(bundle: bundle, infoPlist: app.plist,
                              executable: FileManager.default.fileExists(atPath: executable) ? executable : nil)
        let behavior = app.behavior + ["--log=\(eventLog)"]
        try behavior.joined(separator: "\n").appending("\n").write(toFile: bundle + "/test-behavior", atomically: true, encoding: .utf8)
    }

    /// Stops the daemon with `signal` (SIGKILL: no clean shutdown at all) and starts it again
    /// on the same socket, apps folder and state, after `whileStopped` (e.g. writing state as
    /// an earlier version would have); the new daemon must serve within `within` seconds.
    func restart(signal: Int32, within seconds: TimeInterval = 15, whileStopped: () throws -> Void = {}) throws {
        guard let old = daemon else { throw HarnessError("no daemon to restart") }
        kill(old.pid, signal)
        guard old.process.wait(timeout: 10) != nil else { throw HarnessError("launchservicesd did not die on signal \(signal)") }
        try whileStopped()
        daemon = try startDaemon(within: seconds)
    }

    /// The daemon's environment, which the apps it launches inherit: private config and
    /// data folders, so demo apps keep their files (credentials, defaults) under `root`.
    private var daemonEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root + "/config-home"
        environment["XDG_DATA_HOME"] = dataHome
        // The machine's desktop entries and association files are not the test's: a machine
        // whose /usr/share/applications has scheme handlers would change what tests see.
        environment["XDG_DATA_DIRS"] = root + "/data-dirs"
        environment["XDG_CONFIG_DIRS"] = root + "/config-dirs"
        environment["LAUNCHSERVICES_SOCKET"] = socket
        // The daemon owns its name on the session bus it finds: never the user's. A test that
        // wants it on a bus gives its private bus's address.
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + root + "/no-session-bus"
        environment.merge(extraEnvironment) { $1 }
        return environment
    }

    /// `XDG_DATA_HOME` of the daemon and its apps: app `ID` keeps its files in `dataHome/ID`.
    var dataHome: String { root + "/data" }

    var daemonPID: Int32 { daemon?.pid ?? 0 }
    var daemonOutput: String { (try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "" }

    /// Where the daemon writes each launched app's stdout and stderr (`appLogs.destination`
    /// is `auto` and no systemd runs the daemon here): `ID.log`, rotated to `ID.log.1`.
    var appLogFolder: String { root + "/state/logs" }

    /// One app's log, the rotated part first.
    func appLog(_ id: String) -> String {
        [".log.1", ".log"].map { (try? String(contentsOfFile: appLogFolder + "/" + id + $0, encoding: .utf8)) ?? "" }.joined()
    }

    /// Every launched app's output (each app's log, apps in id order), read once it has not
    /// grown for 100 ms (the daemon writes it off its loop, a moment after the app did), at
    /// most 2 s.
    var appOutput: String {
        func read() -> String {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: appLogFolder)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
            return names.map { appLog(String($0.dropLast(4))) }.joined()
        }
        var last = read()
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            usleep(100_000)
            let now = read()
            if now == last { break }
            last = now
        }
        return last
    }

    /// Lines the test apps recorded, each `PID EVENT…`.
    var events: [String] {
        ((try? String(contentsOfFile: eventLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Events without their PID prefix, optionally only those of one process.
    func eventNames(pid: Int32? = nil) -> [String] {
        events.compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            if let pid, parts[0] != String(pid) { return nil }
            return parts[1]
        }
    }

    /// PIDs of test-app processes, in the order they started.
    var appPIDs: [Int32] {
        events.compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count >= 2 && parts[1] == "started" ? Int32(parts[0]) : nil
        }
    }

    /// Runs a built tool (lsopen, lsctl) against this daemon, bounded by `timeout` seconds.
    @discardableResult
    func run(_ tool: String, _ arguments: [String], timeout: TimeInterval = 60, stdin: String = "/dev/null") throws -> ToolRun {
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = socket
        let path = tool.hasPrefix("/") ? tool : Self.binary(tool)
        return try ChildProcess.run(path, arguments, environment: environment, scratch: root, timeout: timeout, stdin: stdin)
    }

    /// Runs a shell command line (with `$LSOPEN` and `$LSCTL` set) against this daemon.
    func shell(_ command: String, timeout: TimeInterval = 60) throws -> ToolRun {
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = socket
        environment["LSOPEN"] = Self.binary("lsopen")
        environment["LSCTL"] = Self.binary("lsctl")
        return try ChildProcess.run("/bin/sh", ["-c", command], environment: environment, scratch: root, timeout: timeout)
    }

    func lsctl(_ arguments: String..., timeout: TimeInterval = 60, stdin: String = "/dev/null") throws -> ToolRun {
        try run("lsctl", arguments, timeout: timeout, stdin: stdin)
    }

    func lsopen(_ arguments: String..., timeout: TimeInterval = 60) throws -> ToolRun {
        try run("lsopen", arguments, timeout: timeout)
    }

    /// Starts a bundle's `lstestapp` by hand (not through the daemon), as a user would run an
    /// A bundle of test app `name` outside every apps folder (`root/elsewhere/NAME.app`), with
    /// its Info.plist and, unless `executable` is false, the test app's executable: only its
    /// own check-in can register it. Returns the bundle's path.
    func bundleOutsideAppsFolders(_ name: String, executable: Bool = true) throws -> String {
        let bundle = root + "/elsewhere/\(name).app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try TestApp.test(name).plist.write(toFile: bundle + "/Info.plist", atomically: true, encoding: .utf8)
        if executable { try Self.placeExecutable("lstestapp", at: bundle + "/lstestapp") }
        return bundle
    }

    /// app from a shell: it has no fd 3, so it connects to the socket and checks in. Its
    /// output goes to `root/byhand.log` (`byHandOutput`); by hand the test app gets the event
    /// log as an argument instead of from its behaviour file.
    func startByHand(bundle: String, arguments: [String] = []) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = socket
        environment["LAUNCHSERVICES_APP_FD"] = nil
        return try ChildProcess(bundle + "/lstestapp", ["--log=\(eventLog)"] + arguments, environment: environment, stdout: root + "/byhand.log")
    }

    var byHandOutput: String { (try? String(contentsOfFile: root + "/byhand.log", encoding: .utf8)) ?? "" }

    /// Asks this daemon one query over its socket, as the user's tools do, and decodes the
    /// answer as the query's report type (AdminReports.swift).
    func query<Report: Decodable>(_ query: AdminQuery, as report: Report.Type) throws -> Report {
        let client = try LaunchServicesClient(socketPath: socket, program: "integration-tests")
        defer { client.close() }
        return try JSONDecoder().decode(report, from: Data(try client.query(query).utf8))
    }

    /// Runs one administrative command over the socket and decodes its answer.
    func command<Report: Decodable>(_ command: AdminCommand, as report: Report.Type) throws -> Report {
        let client = try LaunchServicesClient(socketPath: socket, program: "integration-tests")
        defer { client.close() }
        return try JSONDecoder().decode(report, from: Data(try client.command(command).utf8))
    }

    /// `lsctl running --json`, decoded; empty when lsctl gets no answer (as before: callers
    /// poll it while the daemon may be restarting).
    func running() throws -> [RunningReport] {
        (try? run("lsctl", ["running", "--json"]).decode([RunningReport].self)) ?? []
    }

    func state(of id: String) throws -> String? {
        try running().first { $0.id == id }?.state
    }

    /// Waits (bounded) until `condition` holds.
    func eventually(_ what: String, within seconds: TimeInterval = 10, _ condition: () throws -> Bool) throws {
        try waitUntil(what, within: seconds, condition)
    }

    /// Stops the daemon with SIGTERM (SIGKILL after 10 s), then removes every file.
    func stop() {
        daemon?.stop()
        // Apps exit when their daemon connection closes; make certain none outlives the test.
        for pid in appPIDs where isAlive(pid) {
            let deadline = Date().addingTimeInterval(3)
            while isAlive(pid) && Date() < deadline { usleep(10_000) }
            if isAlive(pid) { kill(pid, SIGKILL) }
        }
        daemon = nil
        try? FileManager.default.removeItem(atPath: root)
    }

    deinit { stop() }
}

/// Polls `condition` until it holds, or fails naming `what` after `seconds`.
func waitUntil(_ what: String, within seconds: TimeInterval, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return }
        usleep(20_000)
    }
    throw HarnessError("timed out after \(seconds) s waiting for: \(what)")
}

/// Whether a process exists (and is not a zombie awaiting its parent). A killed
/// multithreaded process's main thread can show `Z` while its other threads are still
/// exiting and still hold its descriptors (a daemon's state-folder lock among them), so a
/// zombie main thread counts as dead only once no other thread is left.
func isAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    guard let close = stat.lastIndex(of: ")") else { return true }
    let state = stat[stat.index(close, offsetBy: 2)]
    guard state == "Z" || state == "X" else { return true }
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return threads.count > 1
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
