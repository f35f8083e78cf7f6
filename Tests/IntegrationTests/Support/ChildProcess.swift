import CLaunchServicesShim
import Foundation

/// A child process for tests: spawned with `posix_spawn`, stdio redirected to files, every
/// other descriptor closed, and reaped with `waitpid` — nothing depends on Foundation's
/// `Process` noticing exits, and no child keeps the test runner's pipes open.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `path` (a path, or a name looked up on PATH) with `arguments`.
    init(_ path: String, _ arguments: [String], environment: [String: String], stdin: String = "/dev/null", stdout: String, stderr: String) throws {
        let input = open(stdin, O_RDONLY | O_CLOEXEC)
        let output = open(stdout, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let errors = stdout == stderr ? output : open(stderr, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer {
            close(input)
            close(output)
            if errors != output { close(errors) }
        }
        guard input >= 0, output >= 0, errors >= 0 else { throw HarnessError("cannot open \(stdout) or \(stderr)") }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = ls_spawn_stdio(&child, path, argv, envp, input, output, errors)
        guard rc == 0 else { throw HarnessError("cannot start \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// The exit status (128 + signal when killed), or `nil` while it runs.
    var exitStatus: Int32? {
        lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            let rc = waitpid(pid, &raw, WNOHANG)
            guard rc == pid else { return nil }
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            return status
        }
    }

    var isRunning: Bool { exitStatus == nil }

    /// Waits up to `timeout` seconds; `nil` if it is still running then.
    @discardableResult
    func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = exitStatus { return status }
            usleep(5_000)
        }
        return exitStatus
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; always reaps.
    func stop(grace: TimeInterval = 10) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if wait(timeout: grace) == nil {
            kill(pid, SIGKILL)
            wait(timeout: 10)
        }
    }

    /// Runs a program to completion (bounded), returning status and output.
    static func run(_ path: String, _ arguments: [String], environment: [String: String], scratch: String, timeout: TimeInterval, stdin: String = "/dev/null") throws -> ToolRun {
        let out = scratch + "/\(UUID().uuidString).out", err = out + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        let child = try ChildProcess(path, arguments, environment: environment, stdin: stdin, stdout: out, stderr: err)
        guard let status = child.wait(timeout: timeout) else {
            kill(child.pid, SIGKILL)
            child.wait(timeout: 10)
            throw HarnessError("\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return ToolRun(status: status,
                       stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}
