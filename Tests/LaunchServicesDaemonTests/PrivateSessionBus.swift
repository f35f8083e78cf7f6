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

/// A private session bus for a test: Debian's `dbus-daemon` with a configuration of its own
/// (`<type>session</type>`, a socket in the test's folder, EXTERNAL authentication, a
/// service folder, every local caller allowed), never the user's bus. Each test app is a
/// `.service` file running `scripts/test-peers/dbus_test_app.py` (Debian's python3 with
/// python3-dbus and python3-gi), which the bus starts on the first call to its name
/// (activation); it appends what it received to `records/NAME.jsonl`.
///
/// Everything is stopped by PID: the apps (by the pid each recorded), then the bus; the
/// folder is removed. A test session bus client and activator on a loop of their own come
/// with it (`client`, `activator`).
final class PrivateSessionBus: Sendable {
    enum Mode: String {
        case answer, error, silent, late
    }

    /// One line an app recorded.
    struct Record: Decodable, Equatable {
        var method: String
        var uris: [String]
        var platform_data: [String: String]
        var sender: String
        var pid: Int32
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let testApp = repository + "/scripts/test-peers/dbus_test_app.py"
    static let python = "/usr/bin/python3"
    static let dbusDaemon = "/usr/bin/dbus-daemon"
    /// What the app answers an Open with in `error` mode (dbus_test_app.py).
    static let refusalName = "org.example.Error.Refused"
    static let refusalMessage = "no thanks: \"quoted\" 'single' ; #frag \u{e9}"

    let root: String
    var socket: String { root + "/bus" }
    var address: String { "unix:path=" + socket }
    var recordFolder: String { root + "/records" }
    var trigger: String { root + "/trigger" }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let logLines = NIOLockedValueBox<[String]>([])
    private let daemon = NIOLockedValueBox<ChildProcess?>(nil)

    /// Writes the configuration and a service file per app, and starts the bus.
    init(apps: [String: Mode]) throws {
        for tool in [Self.dbusDaemon, Self.python] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw ProcessError("\(tool) is missing: scripts/test installs it (apt-get install dbus-daemon python3-dbus python3-gi)")
        }
        root = try TemporaryFolder(prefix: "ls-dbus").path
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
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """
        try config.write(toFile: root + "/bus.conf", atomically: true, encoding: .utf8)
        for (name, mode) in apps {
            let exec = [Self.python, Self.testApp, "--name", name, "--record", recordFolder + "/\(name).jsonl", "--mode", mode.rawValue, "--trigger", trigger]
            // dbus-daemon splits Exec as a shell would, without running one: quote each word.
            let line = exec.map { "'" + $0 + "'" }.joined(separator: " ")
            try "[D-BUS Service]\nName=\(name)\nExec=\(line)\n".write(toFile: root + "/services/\(name).service", atomically: true, encoding: .utf8)
        }
        do {
            try start()
        } catch {
            remove()
            throw error
        }
    }

    /// The environment of the bus and of tools the test runs against it: the private bus,
    /// private XDG folders, nothing of the user's session.
    var environment: [String: String] {
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

    /// Starts `dbus-daemon` (again, after `kill`: at the same address) and waits until it
    /// prints its address, which it does once it listens.
    func start() throws {
        let output = root + "/bus.\(UUID().uuidString).out"
        let process = try ChildProcess(Self.dbusDaemon, ["--config-file=" + root + "/bus.conf", "--nofork", "--nopidfile", "--nosyslog", "--print-address=1"],
                                       environment: environment, stdout: output, stderr: root + "/bus.log")
        daemon.withLockedValue { $0 = process }
        try waitFor("dbus-daemon to listen at \(socket)", within: 30) {
            guard process.isRunning else { throw ProcessError("dbus-daemon exited: \((try? String(contentsOfFile: root + "/bus.log", encoding: .utf8)) ?? "")") }
            return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("\n")
        }
    }

    /// Ends the bus at once (SIGKILL, by its PID), as a crash would; its apps lose it.
    func kill() {
        guard let process = daemon.withLockedValue({ $0 }) else { return }
        if process.isRunning { Glibc.kill(process.pid, SIGKILL) }
        process.stop()
    }

    /// What app `name` recorded so far, in order.
    func records(of name: String) -> [Record] {
        guard let text = try? String(contentsOfFile: recordFolder + "/\(name).jsonl", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
    }

    /// Waits (at most 60 s) until app `name` has recorded `count` calls of `method`.
    func waitForCalls(_ method: String, of name: String, count: Int = 1) throws -> [Record] {
        var found: [Record] = []
        try waitFor("\(count) \(method) call(s) recorded by \(name)", within: 60) {
            found = records(of: name).filter { $0.method == method }
            return found.count >= count
        }
        return found
    }

    /// The pids of every app the bus started (from their `started` records).
    var appPIDs: [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: recordFolder)) ?? []
        return names.flatMap { name -> [Int32] in
            guard name.hasSuffix(".jsonl") else { return [] }
            return records(of: String(name.dropLast(6))).filter { $0.method == "started" }.map(\.pid)
        }
    }

    /// An activator on the bus's loop, on `client` or on a new client with `environment` as
    /// the daemon's.
    func makeActivator(environment: [String: String]? = nil, deadline: Duration = .seconds(60), settings: SessionBusSettings = SessionBusSettings(),
                       client given: SessionBusClient? = nil) async throws -> (SessionBusClient, NIOLoopBound<DBusApplicationActivator>) {
        let client = given ?? SessionBusClient(environment: environment ?? ["DBUS_SESSION_BUS_ADDRESS": address], settings: settings)
        let loop = group.next()
        let logLines = self.logLines
        let activator = try await loop.submit {
            NIOLoopBound(DBusApplicationActivator(loop: loop, bus: client, deadline: deadline,
                                                  logger: Logger(label: "dbus-tests") { _ in RecordingLogHandler(lines: logLines, logLevel: .debug) }),
                         eventLoop: loop)
        }.get()
        return (client, activator)
    }

    /// Every answer one `open` got, and whether each came on the loop.
    final class Answers: Sendable {
        let outcomes = NIOLockedValueBox<[DesktopLaunchOutcome]>([])
        let offLoop = NIOLockedValueBox(0)
        var count: Int { outcomes.withLockedValue { $0.count } }
        var first: DesktopLaunchOutcome? { outcomes.withLockedValue { $0.first } }
    }

    /// Starts an open on `activator`; its answers are collected.
    func start(_ activator: NIOLoopBound<DBusApplicationActivator>, busName: String, urls: [String],
               platformData: DBusPlatformData = DBusPlatformData()) -> Answers {
        let answers = Answers()
        let loop = activator.eventLoop
        loop.execute {
            activator.value.open(busName: busName, urls: urls, platformData: platformData) { outcome in
                if !loop.inEventLoop { answers.offLoop.withLockedValue { $0 += 1 } }
                answers.outcomes.withLockedValue { $0.append(outcome) }
            }
        }
        return answers
    }

    /// Opens and waits (at most 90 s) for the answer.
    func open(_ activator: NIOLoopBound<DBusApplicationActivator>, busName: String, urls: [String],
              platformData: DBusPlatformData = DBusPlatformData()) throws -> DesktopLaunchOutcome {
        let answers = start(activator, busName: busName, urls: urls, platformData: platformData)
        return try wait(for: answers)
    }

    func wait(for answers: Answers) throws -> DesktopLaunchOutcome {
        try waitFor("the open's answer", within: 90) { answers.count > 0 }
        guard let outcome = answers.first else { throw ProcessError("no answer") }
        return outcome
    }

    /// Stops the client: every call still owed an answer is answered, its thread ends (waited
    /// for, at most 30 s).
    func shutdown(_ client: SessionBusClient) throws {
        let loop = group.next()
        let stopped = try loop.submit { client.shutdown(on: loop) }.wait()
        let done = NIOLockedValueBox(false)
        stopped.whenComplete { _ in done.withLockedValue { $0 = true } }
        try waitFor("the session bus thread to end", within: 30) { done.withLockedValue { $0 } }
    }

    /// Stops the apps and the bus, by PID, and removes the folder.
    func remove() {
        let pids = appPIDs
        for pid in pids { Glibc.kill(pid, SIGTERM) }
        for pid in pids where (try? waitFor("app \(pid) to end", within: 10, { !isAlive(pid) })) == nil { Glibc.kill(pid, SIGKILL) }
        daemon.withLockedValue { $0 }?.stop()
        try? group.syncShutdownGracefully()
        try? FileManager.default.removeItem(atPath: root)
    }
}
