import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// A private user session for the desktop integration tests: XDG folders under `root`
/// (`~` is `root/home`, the system's folders `root/etc` and `root/usr/share`), a `PATH` whose
/// first folder holds the handler programs (`HandlerPrograms`), an apps folder for native
/// apps, and a real `launchservicesd` with that environment. The real `lsopen` and `lsctl`
/// run with the same environment.
///
/// `stop()` stops the daemon by its PID, then every handler process a record names that is
/// still alive (checked to be ours by its command line, so a reused pid is never signalled),
/// every native test app by the pid it logged, and removes `root`.
final class DesktopSession: @unchecked Sendable {
    let root: String
    var socket: String { root + "/socket" }
    var home: String { root + "/home" }
    var configHome: String { home + "/.config" }
    var dataHome: String { home + "/.local/share" }
    /// `$XDG_DATA_HOME/applications`, where the tests put their entries.
    var applications: String { dataHome + "/applications" }
    var systemApplications: String { root + "/usr/share/applications" }
    var bin: String { root + "/bin" }
    var records: String { root + "/records" }
    var appsFolder: String { root + "/apps" }
    var eventLog: String { root + "/events.log" }
    var log: String { root + "/daemon.log" }
    /// What the daemon's environment adds to (or removes from: an empty value) the session's.
    private let extra: [String: String]
    private var daemon: DaemonProcess?
    /// Processes a test started otherwise (e.g. known only from an outcome), ended by `stop()`.
    private var tracked: [Int32] = []

    /// `graceSeconds` is `desktopEntries.graceSeconds`: small where a handler must be seen
    /// `running`, large where it must be seen exiting within it (it exits at once; the answer
    /// comes then, not at the end of the grace). `setUp` writes entries before the start.
    init(graceSeconds: Double = 30, config: String? = nil, environment: [String: String] = [:], nativeApps: [TestApp] = [],
         setUp: (DesktopSession) throws -> Void = { _ in }) throws {
        extra = environment
        root = try TemporaryFolder(prefix: "ls-desktop-open").path
        do {
            for folder in [bin, records, appsFolder, applications, configHome] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try HandlerPrograms.install(in: bin)
            try (config ?? #"{"desktopEntries": {"graceSeconds": \#(graceSeconds)}}"#).write(toFile: root + "/config.json", atomically: true, encoding: .utf8)
            for app in nativeApps { try install(app) }
            try setUp(self)
            try startDaemon()
        } catch {
            stop()
            throw error
        }
    }

    /// The environment of the daemon, and so of the apps it starts, and of lsopen and lsctl:
    /// nothing of the user's session (no runtime folder, hence no systemd scopes; no bus
    /// unless a test gives one; no desktop name).
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("XDG_") || key.hasPrefix("DBUS_") { environment[key] = nil }
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "TERMINAL", "DISPLAY", "WAYLAND_DISPLAY", "BROWSER"] { environment[key] = nil }
        environment.merge(["HOME": home, "XDG_CONFIG_HOME": configHome, "XDG_CONFIG_DIRS": root + "/etc",
                           "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": root + "/usr/share", "XDG_STATE_HOME": root + "/state-home",
                           "PATH": bin + ":/usr/bin:/bin", "LAUNCHSERVICES_SOCKET": socket, "IT_RECORDS": records]) { $1 }
        for (key, value) in extra {
            environment[key] = value.isEmpty ? nil : value
        }
        return environment
    }

    // MARK: The daemon

    func startDaemon() throws {
        daemon = try DaemonProcess(executable: DaemonHarness.binary("launchservicesd"), socket: socket,
                                   arguments: ["--apps", appsFolder, "--state", root + "/state", "--config", root + "/config.json", "--log-level", "debug"],
                                   environment: environment, log: log, timeout: 30)
    }

    /// SIGTERM by its PID (SIGKILL after 10 s), reaped.
    func stopDaemon() {
        daemon?.stop()
        daemon = nil
    }

    var daemonPID: Int32 { daemon?.pid ?? 0 }
    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Waits (at most 30 s) until the daemon's log holds `text`.
    func waitForLog(_ text: String) throws {
        try waitUntil("the daemon's log to hold \(text)", within: 30) { output.contains(text) }
    }

    /// Waits until a read of the desktop folders has made `id` the desktop choice for
    /// `scheme` (the notice each move is logged with).
    func waitForDesktopChoice(_ scheme: String, _ id: String) throws {
        try waitForLog("desktop handler for '\(scheme)' is now \(id) ")
    }

    // MARK: Entries and apps

    /// Writes `applications/ID` (or `folder/ID`): an application for `schemes` running `exec`,
    /// with `extra` lines after it.
    @discardableResult
    func entry(_ id: String, exec: String?, schemes: [String], name: String? = nil, extra: [String] = [], in folder: String? = nil) throws -> String {
        var lines = ["[Desktop Entry]", "Type=Application", "Name=\(name ?? id)"]
        if let exec { lines.append("Exec=\(exec)") }
        lines.append("MimeType=" + schemes.map { "x-scheme-handler/\($0);" }.joined())
        lines += extra
        let path = (folder ?? applications) + "/" + id
        try writeFile(lines.joined(separator: "\n") + "\n", to: path)
        return path
    }

    /// `~/.config/mimeapps.list`.
    func mimeapps(_ text: String) throws {
        try writeFile(text, to: configHome + "/mimeapps.list")
    }

    /// A native test app (`lstestapp`) bundle in the apps folder; it logs to `eventLog`.
    func install(_ app: TestApp) throws {
        let bundle = appsFolder + "/" + app.folder + ".app"
        try BundleFiles.write(bundle: bundle, infoPlist: app.plist, executable: DaemonHarness.binary(app.executable))
        try (app.behavior + ["--log=\(eventLog)"]).joined(separator: "\n").appending("\n")
            .write(toFile: bundle + "/test-behavior", atomically: true, encoding: .utf8)
    }

    // MARK: Tools

    @discardableResult
    func run(_ tool: String, _ arguments: [String], timeout: TimeInterval = 90) throws -> ToolRun {
        try ChildProcess.run(DaemonHarness.binary(tool), arguments, environment: environment, scratch: root, timeout: timeout)
    }

    @discardableResult
    func lsopen(_ arguments: String..., timeout: TimeInterval = 90) throws -> ToolRun {
        try run("lsopen", arguments, timeout: timeout)
    }

    @discardableResult
    func lsctl(_ arguments: String..., timeout: TimeInterval = 90) throws -> ToolRun {
        try run("lsctl", arguments, timeout: timeout)
    }

    // MARK: What the handlers recorded

    var handlerRecords: [HandlerRecord] { HandlerRecord.all(in: records).filter { $0.kind == .handler } }
    var terminalRecords: [HandlerRecord] { HandlerRecord.all(in: records).filter { $0.kind == .terminal } }

    /// Waits (at most 30 s) until `count` handler processes have recorded; returns them.
    func waitForHandlers(_ count: Int) throws -> [HandlerRecord] {
        var found: [HandlerRecord] = []
        try waitUntil("\(count) handler process(es) to record their arguments", within: 30) {
            found = handlerRecords
            return found.count >= count
        }
        return found
    }

    /// The record of handler process `pid` (waited for, at most 30 s).
    func handler(pid: Int32) throws -> HandlerRecord {
        var found: HandlerRecord?
        try waitUntil("handler process \(pid) to record its arguments", within: 30) {
            found = handlerRecords.first { $0.pid == pid }
            return found != nil
        }
        return try #require(found)
    }

    /// Native test apps' pids, from the event log (`PID started`).
    var nativeAppPIDs: [Int32] {
        ((try? String(contentsOfFile: eventLog, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count >= 2 && parts[1] == "started" ? Int32(parts[0]) : nil
        }
    }

    /// A process for `stop()` to end, when still ours.
    func track(_ pid: Int32) { tracked.append(pid) }

    /// Whether `pid` is alive and runs one of this session's programs (its command line
    /// names `root`): never signal a pid the system may have given to someone else.
    func isOurs(_ pid: Int32) -> Bool {
        guard pid > 0, isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        return String(decoding: data, as: UTF8.self).contains(root)
    }

    /// Ends `pid` (SIGTERM, SIGKILL after 5 s) if it is one of ours; returns when it is gone.
    func end(_ pid: Int32) {
        guard isOurs(pid) else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while isAlive(pid) && Date() < deadline { usleep(10_000) }
        if isOurs(pid) { kill(pid, SIGKILL) }
        let last = Date().addingTimeInterval(5)
        while isAlive(pid) && Date() < last { usleep(10_000) }
    }

    func stop() {
        stopDaemon()
        for pid in Set(HandlerRecord.all(in: records).map(\.pid) + tracked + nativeAppPIDs) { end(pid) }
        try? FileManager.default.removeItem(atPath: root)
    }

    deinit { stop() }
}

/// Reading what `lsopen --json` printed.
extension ToolRun {
    func string(_ key: String) -> String? { json?[key] as? String }
    func int(_ key: String) -> Int? { (json?[key] as? NSNumber)?.intValue }
    func bool(_ key: String) -> Bool? { json?[key] as? Bool }
    /// For failure messages: everything the tool said.
    var said: String { "status \(status); stdout: \(stdout); stderr: \(stderr)" }
}
