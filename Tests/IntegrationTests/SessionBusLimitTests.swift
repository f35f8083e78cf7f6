import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The socket's limits and identity rules for D-Bus callers, with clients nobody on this
/// project wrote: one sender flooding `Open` is held to its bound without keeping another
/// sender waiting, and another user's process is refused.
@Suite("Session bus limits", .serialized)
struct SessionBusLimitTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath

    /// Python's dbus bindings on one connection: 65 `Open` calls of `slow:N` sent at once,
    /// each answer appended (in the order they come) to the JSON file argv[4] as
    /// `[index, errorName, message]`, until the file argv[5] exists (at most 120 s).
    static let flood = """
        import dbus, json, os, sys
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        address, name, path, state, trigger = sys.argv[1:6]
        bus = dbus.bus.BusConnection(address)
        app = dbus.Interface(bus.get_object(name, path, introspect=False), "org.freedesktop.Application")
        answers = []
        def answered(i, error=None):
            answers.append([i, error.get_dbus_name() if error else None, error.get_dbus_message() if error else None])
            with open(state + ".tmp", "w") as f:
                json.dump(answers, f)
            os.rename(state + ".tmp", state)
        for i in range(65):
            app.Open(["slow:%d" % i], dbus.Dictionary({}, signature="sv"), timeout=300,
                     reply_handler=lambda i=i: answered(i), error_handler=lambda e, i=i: answered(i, e))
        loop = GLib.MainLoop()
        def check():
            if os.path.exists(trigger):
                loop.quit()
                return False
            return True
        GLib.timeout_add(20, check)
        GLib.timeout_add_seconds(120, loop.quit)
        loop.run()
        """

    static func answers(_ file: String) -> [[Any]] {
        guard let data = FileManager.default.contents(atPath: file) else { return [] }
        return (try? JSONSerialization.jsonObject(with: data) as? [[Any]]) ?? []
    }

    @Test("a flood of unanswered Open calls from one sender: 64 wait, the 65th is Error.Unavailable at once, and another sender's Open is answered meanwhile")
    func floodIsBounded() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        // slow never answers an open; the deadline is long enough that none times out here.
        let h = try DaemonHarness(apps: [.test("slow", "--open=hang"), .test("fast")], config: #"{"deadlines": {"launch": 20, "openURL": 60}}"#,
                                  environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }

        let state = bus.root + "/flood.json", trigger = bus.root + "/flood.done"
        let script = bus.root + "/flood.py"
        try Self.flood.write(toFile: script, atomically: true, encoding: .utf8)
        let flood = try ChildProcess(PrivateSessionBus.python, [script, bus.address, Self.name, Self.path, state, trigger],
                                     environment: bus.environment, stdout: bus.root + "/flood.out")
        defer {
            #expect(FileManager.default.createFile(atPath: trigger, contents: nil), "the trigger file \(trigger) is written")
            if flood.wait(timeout: 10) == nil { flood.stop() }
        }

        try waitUntil("the 65th call is answered", within: 30) { !Self.answers(state).isEmpty }
        try waitUntil("slow has the first URL: the 64 wait on the app", within: 30) { h.eventNames().contains { $0.hasPrefix("open url=slow:0 ") } }
        let first = Self.answers(state)
        #expect(first.count == 1, "only the 65th is answered: \(first)")
        #expect(first.first?[0] as? Int == 64, "\(first)")
        #expect(first.first?[1] as? String == "org.swift_launch_services.LaunchServices.Error.Unavailable", "\(first)")
        #expect((first.first?[2] as? String)?.contains("already has 64 D-Bus calls waiting for an answer, the limit") == true, "\(first)")
        #expect(h.daemonOutput.contains("has 64 calls waiting"), "the limit is logged")

        // Another sender is not behind the flood.
        let other = try ChildProcess.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                             "--method", "org.freedesktop.Application.Open", "['fast:meanwhile']", "{}"],
                                         environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(other.status == 0, "\(other.stdout) \(other.stderr)")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=fast:meanwhile ") })
        #expect(Self.answers(state).count == 1, "the flood still waits: \(Self.answers(state))")
        #expect(flood.isRunning, "\((try? String(contentsOfFile: bus.root + "/flood.out", encoding: .utf8)) ?? "")")
    }

    @Test("an Open of 257 URLs is Error.InvalidRequest naming the bound of 256, and none of them is opened")
    func tooManyURLsInOneOpen() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try DaemonHarness(apps: [.test("fast")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }

        let script = """
            import dbus, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            app = dbus.Interface(bus.get_object(sys.argv[2], sys.argv[3]), "org.freedesktop.Application")
            try:
                app.Open(["fast:%d" % i for i in range(257)], dbus.Dictionary({}, signature="sv"))
                print("answered")
            except dbus.exceptions.DBusException as e:
                print(e.get_dbus_name())
                print(e.get_dbus_message())
            """
        let run = try ChildProcess.run(PrivateSessionBus.python, ["-c", script, bus.address, Self.name, Self.path],
                                       environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "org.swift_launch_services.LaunchServices.Error.InvalidRequest\n257 URLs in one Open; launchservicesd takes at most 256 per call\n", "\(run.stdout)")
        // The daemon still serves the sender, and nothing of the refused call reached the app.
        let after = try ChildProcess.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                            "--method", "org.freedesktop.Application.Open", "['fast:after']", "{}"],
                                         environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(after.status == 0, "\(after.stderr)")
        #expect(h.eventNames().filter { $0.hasPrefix("open url=fast:") }.count == 1, "\(h.eventNames())")
    }

    /// Calling as another user needs root (`setpriv`); unprivileged, the test is skipped, and
    /// the rule is the socket's (`ConnectionService.connectionOpened`).
    @Test("another uid's Open is refused: Error.NotPermitted, and its URL never reaches the app",
          .enabled(if: getuid() == 0, "calling as another user (setpriv) needs root"))
    func otherUserRefused() throws {
        let bus = try PrivateSessionBus(apps: [:], otherUsers: true)
        defer { bus.remove() }
        let h = try DaemonHarness(apps: [.test("fast")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }

        var environment = bus.environment
        environment["HOME"] = "/nonexistent"
        let nobody = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                                               "/usr/bin/gdbus", "call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                               "--method", "org.freedesktop.Application.Open", "['fast:from-nobody']", "{}"],
                                          environment: environment, scratch: bus.root, timeout: 60)
        #expect(nobody.status != 0)
        #expect(nobody.stderr.contains("org.swift_launch_services.LaunchServices.Error.NotPermitted"), "\(nobody.stdout) \(nobody.stderr)")
        // The project's interface too: not even a CanOpen answer, nor an Open's.
        for call in [["CanOpen", "fast:x"], ["Open", "fast:from-nobody-too", "{}"]] {
            let run = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                                                "/usr/bin/gdbus", "call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                                "--method", LaunchServicesBus.interface + "." + call[0]] + call.dropFirst(),
                                           environment: environment, scratch: bus.root, timeout: 60)
            #expect(run.status != 0 && run.stdout.isEmpty, "\(call[0]): \(run.stdout)")
            #expect(run.stderr.contains("org.swift_launch_services.LaunchServices.Error.NotPermitted"), "\(call[0]): \(run.stderr)")
        }
        // The same call as the daemon's user is served: the refusal is the uid's.
        let own = try ChildProcess.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                          "--method", "org.freedesktop.Application.Open", "['fast:from-owner']", "{}"],
                                       environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(own.status == 0, "\(own.stderr)")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=fast:from-owner ") })
        #expect(!h.eventNames().contains { $0.hasPrefix("open url=fast:from-nobody") }, "neither nobody's Open reached the app")
    }
}
