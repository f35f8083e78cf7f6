import CLaunchServicesShim
import Foundation
import Synchronization

/// `ChildProcess` owns one real child process of a test or a benchmark: started with
/// `posix_spawn` (stdin, stdout and stderr redirected to files, every other descriptor
/// closed), reaped with `waitpid` exactly once, and stopped by its PID only (SIGTERM, then
/// SIGKILL) — never by name, so nothing else on the machine is touched. After it is reaped
/// its PID may belong to someone else, so it is never signalled again. Also here: running a
/// program to completion with its output captured (`run`) or timed (`timedRun`).
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The exit status (128 + signal when killed), once reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `path` (a path, or a name looked up on PATH) with `arguments`; its output goes
    /// to `stdout` and `stderr` (files, appended to and created if needed; `stderr` defaults
    /// to the same file as `stdout`).
    public init(_ path: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                stdin: String = "/dev/null", stdout: String, stderr: String? = nil) throws {
        let stderr = stderr ?? stdout
        let input = open(stdin, O_RDONLY | O_CLOEXEC)
        let output = open(stdout, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let errors = stdout == stderr ? output : open(stderr, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer {
            if input >= 0 { close(input) }
            if output >= 0 { close(output) }
            if errors != output && errors >= 0 { close(errors) }
        }
        guard input >= 0, output >= 0, errors >= 0 else { throw ProcessError("cannot open \(stdin), \(stdout) or \(stderr)") }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = ls_spawn_stdio(&child, path, argv, envp, input, output, errors)
        guard rc == 0 else { throw ProcessError("cannot start \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
    }

    /// The exit status (128 + signal when killed), or `nil` while it runs. Reaps it if it
    /// has exited, without blocking.
    public var exitStatus: Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            status = Self.decode(raw)
            return status
        }
    }

    public var isRunning: Bool { exitStatus == nil }

    /// Waits up to `timeout` seconds; `nil` if it is still running then.
    @discardableResult
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var pause: UInt32 = 200
        while Date() < deadline {
            if let status = exitStatus { return status }
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
        return exitStatus
    }

    /// Blocks until the process exits, however long that is; returns its exit status.
    @discardableResult
    public func wait() -> Int32 {
        if let status = status.withLock({ $0 }) { return status }
        var raw: Int32 = 0
        var rc: pid_t
        repeat { rc = waitpid(pid, &raw, 0) } while rc == -1 && errno == EINTR
        return status.withLock { status in
            // -1 (ECHILD): another thread reaped it through `exitStatus` meanwhile.
            if rc == pid && status == nil { status = Self.decode(raw) }
            return status ?? -1
        }
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; always reaps (bounded).
    public func stop(grace: TimeInterval = 10) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if wait(timeout: grace) == nil {
            kill(pid, SIGKILL)
            wait(timeout: 10)
        }
    }

    /// Runs a program to completion, bounded by `timeout` seconds (then SIGKILLed, and the
    /// run throws); its output is captured in files in `scratch`, returned and removed.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           scratch: String, timeout: TimeInterval, stdin: String = "/dev/null") throws -> ToolRun {
        let out = scratch + "/\(UUID().uuidString).out", err = out + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        let child = try ChildProcess(path, arguments, environment: environment, stdin: stdin, stdout: out, stderr: err)
        guard let status = child.wait(timeout: timeout) else {
            kill(child.pid, SIGKILL)
            child.wait(timeout: 10)
            throw ProcessError("\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return ToolRun(status: status,
                       stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// Nanoseconds from spawn to reaped exit of one run of a program, its output discarded
    /// (a blocking `waitpid`, so nothing but the process is timed). A run that exits with
    /// another status than `expecting` throws, so a failing program is never timed as if it
    /// had done its work; `nil` accepts any status.
    public static func timedRun(_ path: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                                expecting: Int32? = 0) throws -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        let status = try ChildProcess(path, arguments, environment: environment, stdout: "/dev/null").wait()
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        if let expecting, status != expecting {
            throw ProcessError("\(path) \(arguments.joined(separator: " ")) exited with status \(status), not \(expecting)")
        }
        return elapsed
    }
}

/// What a program run to completion left: its exit status and its output.
public struct ToolRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Why a child process, a temporary folder or a daemon could not be set up.
public struct ProcessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
