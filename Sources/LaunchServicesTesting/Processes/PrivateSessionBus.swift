import Foundation
import NIOConcurrencyHelpers

/// `PrivateSessionBus` owns a private D-Bus session bus for a test: Debian's `dbus-daemon`
/// with a configuration of its own (`<type>session</type>`, a socket in the test's folder,
/// EXTERNAL authentication, a service folder, every local caller allowed), never the
/// user's bus. Each test app is a `.service` file running `scripts/test-peers/dbus_test_app.py`
/// (Debian's python3 with python3-dbus and python3-gi), which the bus starts on the first
/// call to its name (activation); the app implements `org.freedesktop.Application` and
/// appends each call it received to `records/NAME.jsonl` (`records(of:)`).
///
/// Everything is stopped by PID (`remove()`): the apps, by the pid each recorded, then the
/// bus; then the folder is removed.
public final class PrivateSessionBus: Sendable {
    /// How an app answers `Open`.
    public enum Mode: String, Sendable {
        /// An empty reply.
        case answer
        /// The error `refusalName` with `refusalMessage`.
        case error
        /// Never.
        case silent
        /// Once the file `trigger` exists (then it records `replied`).
        case late
    }

    /// One call an app recorded (`method` is `started` for its start).
    public struct Record: Decodable, Equatable, Sendable {
        public var method: String
        public var uris: [String]
        public var platformData: [String: String]
        public var sender: String
        public var pid: Int32

        enum CodingKeys: String, CodingKey {
            case method, uris, sender, pid
            case platformData = "platform_data"
        }
    }

    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    public static let testApp = repository + "/scripts/test-peers/dbus_test_app.py"
    public static let python = "/usr/bin/python3"
    public static let dbusDaemon = "/usr/bin/dbus-daemon"
    /// What an app answers `Open` with in `error` mode (dbus_test_app.py).
    public static let refusalName = "org.example.Error.Refused"
    public static let refusalMessage = "no thanks: \"quoted\" 'single' ; #frag \u{e9}"

    public let root: String
    public var socket: String { root + "/bus" }
    public var address: String { "unix:path=" + socket }
    public var recordFolder: String { root + "/records" }
    /// The file a `late` app waits for before it replies.
    public var trigger: String { root + "/trigger" }
    private let daemon = NIOLockedValueBox<ChildProcess?>(nil)

    /// Writes the configuration and a service file per app (name → how it answers), and
    /// starts the bus. `otherUsers`: connections from any uid are accepted (dbus-daemon
    /// accepts only its own by default) and the folder is searchable by them, so a test can
    /// call as another user (`setpriv`).
    public init(apps: [String: Mode], otherUsers: Bool = false) throws {
        for tool in [Self.dbusDaemon, Self.python] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw ProcessError("\(tool) is missing: scripts/test installs it (apt-get install dbus-daemon python3-dbus python3-gi)")
        }
        root = try TemporaryFolder(prefix: "ls-dbus").path
        do {
            for folder in ["services", "records"] {
                try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
            }
            let config = """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:path=\(socket)</listen>
                  <servicedir>\(root)/services</servicedir>
                  <auth>EXTERNAL</auth>
                  <policy context="default">
                    \(otherUsers ? "<allow user=\"*\"/>" : "")
                    <allow send_destination="*"/>
                    <allow receive_sender="*"/>
                    <allow own="*"/>
                  </policy>
                </busconfig>

                """
            try config.write(toFile: root + "/bus.conf", atomically: true, encoding: .utf8)
            if otherUsers { chmod(root, 0o711) }
            for (name, mode) in apps {
                let exec = [Self.python, Self.testApp, "--name", name, "--record", recordFolder + "/\(name).jsonl", "--mode", mode.rawValue, "--trigger", trigger]
                // dbus-daemon splits Exec as a shell would, without running one: quote each word.
                let line = exec.map { "'" + $0 + "'" }.joined(separator: " ")
                try "[D-BUS Service]\nName=\(name)\nExec=\(line)\n".write(toFile: root + "/services/\(name).service", atomically: true, encoding: .utf8)
            }
            try start()
        } catch {
            remove()
            throw error
        }
    }

    /// The environment of the bus and of tools run against it: the private bus, private XDG
    /// folders under `root` (`data`, `config`; the system ones point at folders that do not
    /// exist), nothing of the user's session.
    public var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("DBUS_") || key.hasPrefix("XDG_") { environment[key] = nil }
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        environment["HOME"] = root
        environment["XDG_DATA_HOME"] = root + "/data"
        environment["XDG_DATA_DIRS"] = root + "/no-data"
        environment["XDG_CONFIG_HOME"] = root + "/config"
        environment["XDG_CONFIG_DIRS"] = root + "/no-config"
        return environment
    }

    /// Starts `dbus-daemon` (again, after `kill`: at the same address) and waits (at most
    /// 30 s) until it prints its address, which it does once it listens.
    public func start() throws {
        let output = root + "/bus.\(UUID().uuidString).out"
        let process = try ChildProcess(Self.dbusDaemon, ["--config-file=" + root + "/bus.conf", "--nofork", "--nopidfile", "--nosyslog", "--print-address=1"],
                                       environment: environment, stdout: output, stderr: root + "/bus.log")
        daemon.withLockedValue { $0 = process }
        try Self.waitFor("dbus-daemon to listen at \(socket)", within: 30) {
            guard process.isRunning else { throw ProcessError("dbus-daemon exited: \((try? String(contentsOfFile: root + "/bus.log", encoding: .utf8)) ?? "")") }
            return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("\n")
        }
    }

    /// Ends the bus at once (SIGKILL, by its PID), as a crash would; its apps lose it.
    public func kill() {
        guard let process = daemon.withLockedValue({ $0 }) else { return }
        if process.isRunning { Foundation.kill(process.pid, SIGKILL) }
        process.stop()
    }

    /// What app `name` recorded so far, in order.
    public func records(of name: String) -> [Record] {
        guard let text = try? String(contentsOfFile: recordFolder + "/\(name).jsonl", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
    }

    /// Waits (at most 60 s) until app `name` has recorded `count` calls of `method`; returns them.
    public func waitForCalls(_ method: String, of name: String, count: Int = 1) throws -> [Record] {
        var found: [Record] = []
        try Self.waitFor("\(count) \(method) call(s) recorded by \(name)", within: 60) {
            found = records(of: name).filter { $0.method == method }
            return found.count >= count
        }
        return found
    }

    /// The pids of every app the bus started (from their `started` records).
    public var appPIDs: [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: recordFolder)) ?? []
        return names.flatMap { name -> [Int32] in
            guard name.hasSuffix(".jsonl") else { return [] }
            return records(of: String(name.dropLast(6))).filter { $0.method == "started" }.map(\.pid)
        }
    }

    /// Stops the apps (SIGTERM, then SIGKILL after 10 s) and the bus, by PID, and removes the folder.
    public func remove() {
        let pids = appPIDs
        for pid in pids { Foundation.kill(pid, SIGTERM) }
        for pid in pids where (try? Self.waitFor("app \(pid) to end", within: 10, { !Self.isAlive(pid) })) == nil {
            Foundation.kill(pid, SIGKILL)
        }
        daemon.withLockedValue { $0 }?.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Polls `condition` every 20 ms until it holds, or throws naming `what` after `seconds`.
    public static func waitFor(_ what: String, within seconds: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return }
            // A test's own thread polling files another process writes; no event loop waits.
            usleep(20_000)  // bounded by the deadline above
        }
        throw ProcessError("timed out after \(seconds) s waiting for \(what)")
    }

    /// Whether `pid` runs (a zombie counts as gone).
    static func isAlive(_ pid: Int32) -> Bool {
        guard Foundation.kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }
}
