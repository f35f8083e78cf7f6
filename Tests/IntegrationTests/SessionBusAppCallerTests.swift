import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// An app's own process calling the daemon over D-Bus, not a process it started: the bus
/// names the app's pid, so the daemon takes the caller for the app itself, with its gating
/// and without administration.
///
/// The app holds the bus connection: lstestapp's `--bus-run` connects to the bus's socket in
/// the app's process, and the bus reads the connection's credentials from that socket
/// (`SO_PEERCRED`, fixed by `connect(2)`); GLib's `GDBusConnection` (Python's `gi`) then
/// speaks D-Bus on the inherited descriptor. The test checks the daemon was told the app's
/// pid, not the speaking child's, so the app itself is what was identified.
@Suite("An app calling over D-Bus", .serialized)
struct SessionBusAppCallerTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath
    static let interface = LaunchServicesBus.interface

    /// Speaks D-Bus, through GLib, on the connection in `LSTESTAPP_BUS_FD` and writes what
    /// each call answered to argv[4] as JSON: `{"unique": NAME, CALL: {"value": …} or
    /// {"error": NAME, "message": TEXT}}`.
    static let script = """
        import json, os, sys
        from gi.repository import Gio, GLib
        name, path, interface, out = sys.argv[1:5]
        socket = Gio.Socket.new_from_fd(int(os.environ["LSTESTAPP_BUS_FD"]))
        stream = socket.connection_factory_create_connection()
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        bus = Gio.DBusConnection.new_sync(stream, None, flags, None, None)
        answers = {"unique": bus.get_unique_name()}
        def call(key, method, signature=None, *args, on=interface):
            try:
                reply = bus.call_sync(name, path, on, method, GLib.Variant(signature, args) if signature else None,
                                      None, Gio.DBusCallFlags.NONE, 60000, None)
                answers[key] = {"value": list(reply.unpack())}
            except GLib.Error as e:
                answers[key] = {"error": Gio.DBusError.get_remote_error(e), "message": e.message}
        call("canOpenUnqueried", "CanOpen", "(s)", "alpha:x")
        call("canOpenQueried", "CanOpen", "(s)", "beta:x")
        call("open", "Open", "(sa{sv})", "alpha:from-app", {})
        call("applicationOpen", "Open", "(asa{sv})", ["beta:from-app"], {}, on="org.freedesktop.Application")
        call("history", "History")
        call("quit", "Quit", "(s)", "test.alpha")
        with open(out + ".tmp", "w") as f:
            json.dump(answers, f)
        os.rename(out + ".tmp", out)
        """

    @Test("the app's own bus connection: the daemon names the app's pid; CanOpen gated by its LSApplicationQueriesSchemes, opens from it, History and Quit refused")
    func appItselfIsTheApp() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let scriptFile = bus.root + "/app-caller.py", out = bus.root + "/app-caller.json"
        try Self.script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        let command = "\(PrivateSessionBus.python) \(scriptFile) \(Self.name) \(Self.path) \(Self.interface) \(out) >\(bus.root)/app-caller.out 2>&1"
        var zevil = TestApp.test("zevil", "--bus-run=\(command)")
        zevil.queriesSchemes = ["beta"]
        // Long deadlines: zevil answers its launch only once its calls are done.
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta"), zevil], config: #"{"deadlines": {"launch": 60, "openURL": 60}}"#,
                                  environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }
        #expect(try h.lsopen("alpha:started").status == 0)

        #expect(try h.lsopen("zevil:go").status == 0)
        try waitUntil("the app's calls were answered", within: 60) { h.eventNames().contains { $0.hasPrefix("busRun ") } }
        let ran = try #require(h.eventNames().first { $0.hasPrefix("busRun ") })
        let log = (try? String(contentsOfFile: bus.root + "/app-caller.out", encoding: .utf8)) ?? ""
        #expect(ran.hasSuffix(" -> 0"), "\(ran): \(log)")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any], "\(log)")
        func answer(_ key: String) -> [String: Any] { answers[key] as? [String: Any] ?? [:] }

        // The bus told the daemon the app's own pid (the process that connected), not the
        // pid of the child speaking on its connection.
        let line = try #require(h.events.first { $0.split(separator: " ").dropFirst().first == "busRun" })
        let zevilPID = try #require(Int32(line.split(separator: " ")[0]))
        #expect(line.contains(" busRun pid=\(zevilPID) -> ") && h.appPIDs.contains(zevilPID), "\(h.events)")
        let unique = try #require(answers["unique"] as? String)
        #expect(h.daemonOutput.contains("D-Bus caller \(unique) (pid \(zevilPID), uid \(getuid())) speaks as test.zevil"), "\(h.daemonOutput)")

        // Gated by its LSApplicationQueriesSchemes: beta is declared, alpha is not.
        #expect(answer("canOpenUnqueried")["value"] as? [Bool] == [false], "\(answers)")
        #expect(answer("canOpenQueried")["value"] as? [Bool] == [true], "\(answers)")
        // Its opens carry it as their source, as its own socket opens would.
        let opened = try #require((answer("open")["value"] as? [Any])?.first as? [String: Any], "\(answers)")
        #expect(opened["app"] as? String == "test.alpha" && opened["opened"] as? Bool == true, "\(opened)")
        #expect(h.eventNames().contains { $0.contains("url=alpha:from-app source=test.zevil") }, "\(h.eventNames())")
        #expect(answer("applicationOpen")["value"] as? [Any] != nil, "\(answers)")
        try waitUntil("beta has the URL", within: 20) { h.eventNames().contains { $0.contains("url=beta:from-app source=test.zevil") } }
        // No administration.
        for key in ["history", "quit"] {
            #expect(answer(key)["error"] as? String == "org.swift_launch_services.LaunchServices.Error.NotPermitted", "\(key): \(answers)")
        }
        #expect((answer("quit")["message"] as? String)?.contains("only the user quits apps") == true, "\(answers)")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=alpha:from-app") } && !h.eventNames().contains("willTerminate"), "alpha was not quit")

        // The user's own process, for contrast: alpha is openable and History is answered.
        let user = try ChildProcess.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                           "--method", Self.interface + ".CanOpen", "alpha:x"],
                                        environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(user.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(true,)", "\(user.stdout) \(user.stderr)")
    }

    /// Connects to the bus (argv[1], a socket path) in this process, forks, and ends; the
    /// child, once this process is gone, speaks D-Bus through GLib on the inherited
    /// connection, whose credentials name the ended pid, and writes each call's answer to
    /// argv[5] as JSON ({"makerGone": …, CALL: {"value": …} or {"error": …, "message": …}}).
    static let outliving = """
        import json, os, socket, sys, time
        from gi.repository import Gio, GLib
        address, name, path, interface, out = sys.argv[1:6]
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(address)
        maker = os.getpid()
        if os.fork() != 0:
            os._exit(0)
        deadline = time.monotonic() + 30
        while os.path.exists("/proc/%d" % maker) and time.monotonic() < deadline:
            time.sleep(0.01)
        answers = {"makerGone": not os.path.exists("/proc/%d" % maker)}
        stream = Gio.Socket.new_from_fd(connection.detach()).connection_factory_create_connection()
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        bus = Gio.DBusConnection.new_sync(stream, None, flags, None, None)
        for key, method, signature, args in [("canOpen", "CanOpen", "(s)", ("alpha:x",)), ("history", "History", None, ())]:
            try:
                reply = bus.call_sync(name, path, interface, method, GLib.Variant(signature, args) if signature else None,
                                      None, Gio.DBusCallFlags.NONE, 60000, None)
                answers[key] = {"value": str(reply.unpack())}
            except GLib.Error as e:
                answers[key] = {"error": Gio.DBusError.get_remote_error(e), "message": e.message}
        with open(out + ".tmp", "w") as f:
            json.dump(answers, f)
        os.rename(out + ".tmp", out)
        """

    @Test("an app's child whose bus connection outlives the process that made it is not taken for the user: its calls are refused")
    func connectionOutlivingItsMaker() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let scriptFile = bus.root + "/outliving.py", out = bus.root + "/outliving.json"
        try Self.outliving.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        let command = "\(PrivateSessionBus.python) \(scriptFile) \(bus.socket) \(Self.name) \(Self.path) \(Self.interface) \(out) >\(bus.root)/outliving.out 2>&1"
        let h = try DaemonHarness(apps: [.test("alpha"), .test("zevil", "--child-run=\(command)")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }
        #expect(try h.lsopen("zevil:go").status == 0)
        try waitUntil("the orphan's calls were answered", within: 60) { FileManager.default.fileExists(atPath: out) }
        let log = (try? String(contentsOfFile: bus.root + "/outliving.out", encoding: .utf8)) ?? ""
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any], "\(log)")
        #expect(answers["makerGone"] as? Bool == true, "\(answers) \(log)")
        // As the user it would be answered (CanOpen true, History's rows); as zevil, false and
        // NotPermitted. Nobody can say which it is: refused.
        for key in ["canOpen", "history"] {
            let answer = answers[key] as? [String: Any] ?? [:]
            #expect(answer["value"] == nil, "\(key) answered: \(answers)")
            #expect(answer["error"] as? String == "org.swift_launch_services.LaunchServices.Error.NotPermitted", "\(key): \(answers)")
        }
        #expect(!h.daemonOutput.contains("speaks as org.swift-launch-services.lsopen"), "\(h.daemonOutput)")
    }
}
