import Foundation
import LaunchServicesClient

/// `DaemonProcess` owns a real `launchservicesd` started from a built executable for a test
/// or a benchmark: it is started on its own socket with its output in a log file, counted as
/// started only once it answers a status query on that socket, and stopped by its PID.
/// A daemon that exits or does not answer in time is stopped and reported with its log.
public final class DaemonProcess: Sendable {
    public let socket: String
    /// Where the daemon's stdout and stderr go.
    public let log: String
    public let process: ChildProcess

    /// Starts `executable --socket SOCKET ARGUMENTS…` and waits (polling every `poll`
    /// microseconds, at most `timeout` seconds) until it serves `socket`.
    public init(executable: String, socket: String, arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                log: String, timeout: TimeInterval = 15, poll: UInt32 = 20_000) throws {
        self.socket = socket
        self.log = log
        process = try ChildProcess(executable, ["--socket", socket] + arguments, environment: environment, stdout: log)
        do {
            try Self.waitUntilServing(socket: socket, process: process, log: log, timeout: timeout, poll: poll)
        } catch {
            process.stop()
            throw error
        }
    }

    public var pid: pid_t { process.pid }
    public var isRunning: Bool { process.isRunning }
    /// What the daemon has written to its log so far.
    public var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// SIGTERM, then SIGKILL after `grace` seconds; reaps it.
    public func stop(grace: TimeInterval = 10) { process.stop(grace: grace) }

    /// Polls `socket` until a daemon there answers a status query; fails early if `process`
    /// (the daemon, when known) exits first, with its `log` in the error.
    public static func waitUntilServing(socket: String, process: ChildProcess?, log: String, timeout: TimeInterval = 15, poll: UInt32 = 20_000) throws {
        let deadline = Date().addingTimeInterval(timeout)
        let output = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        while Date() < deadline {
            if let client = try? LaunchServicesClient(socketPath: socket, program: "ls-testing") {
                defer { client.close() }
                if (try? client.query(.status, timeout: .seconds(2))) != nil { return }
            }
            if let process, !process.isRunning {
                throw ProcessError("launchservicesd exited during start: \(output())")
            }
            usleep(poll)
        }
        throw ProcessError("launchservicesd did not serve \(socket) within \(Int(timeout)) s: \(output())")
    }
}
