import Foundation
import NIOConcurrencyHelpers

/// A private `systemd --user` manager for one test: its own HOME and runtime folder (so its
/// private socket, `RUNTIME/systemd/private`, is the test's), started as the test's child,
/// stopped by its PID. Where PID 1 is not systemd (a CI container) the manager runs only
/// once `/run/systemd/system` exists; both that and running alone are `UserManagerLease`'s. `nil` from `start` where systemd is not installed.
public final class SystemdUserManager: Sendable {
    public let home: String
    /// The manager's `XDG_RUNTIME_DIR`.
    public let runtime: String
    private let process: ChildProcess
    private let lease: UserManagerLease
    private let stopped = NIOLockedValueBox(false)

    public static let executable = "/lib/systemd/systemd"

    /// A running manager, or `nil` when systemd is not installed here.
    public static func start() throws -> SystemdUserManager? {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
        return try SystemdUserManager()
    }

    private init() throws {
        home = try TemporaryFolder(prefix: "ls-usermanager").path
        runtime = home + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            lease = try UserManagerLease()
        } catch {
            try? FileManager.default.removeItem(atPath: home)
            throw error
        }
        do {
            process = try ChildProcess(Self.executable, ["--user"], environment: Self.environment(home: home, runtime: runtime), stdout: home + "/manager.log")
        } catch {
            lease.release()
            try? FileManager.default.removeItem(atPath: home)
            throw error
        }
        let deadline = Date().addingTimeInterval(30)
        while true {
            let state = (try? systemctl("is-system-running").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? ""
            if state == "running" || state == "degraded" { break }
            guard Date() < deadline, process.isRunning else {
                let log = (try? String(contentsOfFile: home + "/manager.log", encoding: .utf8)) ?? ""
                stop()
                throw ProcessError("the user manager did not start within 30 s (state '\(state)'): \(log)")
            }
            // A test's own thread polling another process's state; no event loop waits.
            usleep(50_000)
        }
    }

    /// The test's environment with the manager's HOME and XDG_RUNTIME_DIR, and nothing of a
    /// service's own (socket activation, notification).
    public static func environment(home: String, runtime: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "LAUNCHSERVICES_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID"] {
            environment[key] = nil
        }
        environment["HOME"] = home
        environment["XDG_RUNTIME_DIR"] = runtime
        return environment
    }

    public var environment: [String: String] { Self.environment(home: home, runtime: runtime) }

    /// `systemctl --user ARGUMENTS…`, bounded to 30 s.
    public func systemctl(_ arguments: String...) throws -> ToolRun {
        try ChildProcess.run("/usr/bin/systemctl", ["--user"] + arguments, environment: environment, scratch: home, timeout: 30)
    }

    /// Stops the manager by its PID (it stops its units first), then removes its folder; once.
    public func stop() {
        guard !stopped.withLockedValue({ let was = $0; $0 = true; return was }) else { return }
        process.stop(grace: 15)
        lease.release()
        try? FileManager.default.removeItem(atPath: home)
    }
}
