import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The daemon on a private session bus, called by D-Bus clients nobody on this project
/// wrote (`gdbus`, `busctl`, Python's `dbus`): its name, `org.freedesktop.Application` at the
/// path the Desktop Entry specification derives, opens answered as lsopen's, and the bus
/// going away and coming back.
@Suite("On the session bus", .serialized)
struct SessionBusTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath



    private func gdbusOpen(_ uris: [String], _ bus: PrivateSessionBus) throws -> ToolRun {
        let list = "[" + uris.map { "'\($0)'" }.joined(separator: ", ") + "]"
        return try bus.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                           "--method", "org.freedesktop.Application.Open", list, "{}"])
    }

    @Test("the name's path is the one the Desktop Entry specification derives, and a valid bus name")
    func nameAndPath() {
        #expect(DBusName.problem(wellKnown: Self.name) == nil)
        #expect(Self.path == "/org/swift_launch_services/LaunchServices")
        #expect(LaunchServicesBus.errorName(.noHandler) == "org.swift_launch_services.LaunchServices.Error.NoHandler")
    }

    @Test("launchservicesd --help (and so its man page) names the bus name, the path and both interfaces")
    func helpNamesTheBus() throws {
        let help = try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--help"], environment: ProcessInfo.processInfo.environment,
                                        scratch: FileManager.default.temporaryDirectory.path, timeout: 30)
        let text = help.stdout.replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        for word in [Self.name, Self.path, "org.freedesktop.Application", LaunchServicesBus.interface, "DBUS_SESSION_BUS_ADDRESS"] {
            #expect(text.contains(word), "\(word): \(help.stdout)")
        }
    }

    @Test("gdbus Open opens a native demo app and replies once it has the URL; no handler is the NoHandler error with lsopen's message")
    func gdbusOpensNativeApp() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        let opened = try gdbusOpen(["todolist://www.acme.com?Quarterly%20Report#200806231300"], bus)
        #expect(opened.status == 0, "\(opened.stdout) \(opened.stderr)")
        #expect(opened.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "()")
        let output = h.appOutput
        #expect(output.contains("[todolist] host: www.acme.com"), "\(output)")
        #expect(output.contains("[todolist] query: Quarterly Report"))
        // The caller was identified as a socket peer would be: a user's process, not an app.
        #expect(output.contains("[todolist] from: org.swift-launch-services.lsopen"))

        let refused = try gdbusOpen(["nosuch:x"], bus)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("org.swift_launch_services.LaunchServices.Error.NoHandler"), "\(refused.stderr)")
        let lsopen = try h.lsopen("--json", "nosuch:x")
        let message = try #require(lsopen.errorMessage)
        #expect(refused.stderr.contains(message), "the same message as lsopen's: \(message) / \(refused.stderr)")
    }

    @Test("busctl Open with two URLs: both are opened or answered, and the reply names the first failure")
    func busctlTwoURLs() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        let run = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "call", Self.name, Self.path, "org.freedesktop.Application", "Open",
                                               "asa{sv}", "3", "todolist://first", "nosuch:a", "othersuch:b", "0"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("'nosuch'"), "the first failure, not the second: \(run.stderr)")
        #expect(!run.stderr.contains("othersuch"))
        try waitUntil("todolist has the first URL", within: 10) { h.appOutput.contains("[todolist] host: first") }

        // dbus-send cannot send an empty a{sv}; Python's dbus bindings can.
        let script = """
            import dbus, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            app = dbus.Interface(bus.get_object(sys.argv[2], sys.argv[3]), "org.freedesktop.Application")
            app.Open(["todolist://second"], dbus.Dictionary({}, signature="sv"))
            try:
                app.Open(["nosuch:z"], dbus.Dictionary({}, signature="sv"))
            except dbus.exceptions.DBusException as e:
                print(e.get_dbus_name())
            """
        let python = try bus.run(PrivateSessionBus.python, ["-c", script, bus.address, Self.name, Self.path])
        #expect(python.status == 0, "\(python.stderr)")
        #expect(python.stdout == "org.swift_launch_services.LaunchServices.Error.NoHandler\n", "\(python.stdout)")
        try waitUntil("todolist has the second URL", within: 10) { h.appOutput.contains("[todolist] host: second") }

        let activate = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "call", Self.name, Self.path, "org.freedesktop.Application", "Activate", "a{sv}", "0"])
        #expect(activate.status == 0, "\(activate.stderr)")
        let action = try bus.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                 "--method", "org.freedesktop.Application.ActivateAction", "quit", "[]", "{}"])
        #expect(action.status != 0)
        #expect(action.stderr.contains("org.swift_launch_services.LaunchServices.Error.InvalidRequest"), "\(action.stderr)")
    }

    @Test("gdbus introspect and busctl introspect show org.freedesktop.Application's three methods")
    func introspection() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        let gdbus = try bus.run("/usr/bin/gdbus", ["introspect", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path])
        #expect(gdbus.status == 0, "\(gdbus.stderr)")
        #expect(gdbus.stdout.contains("interface org.freedesktop.Application"))
        for method in ["Activate(in  a{sv} platform_data)", "Open(in  as uris,", "ActivateAction(in  s action_name,"] {
            #expect(gdbus.stdout.contains(method), "\(method): \(gdbus.stdout)")
        }
        let busctl = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "introspect", Self.name, Self.path, "org.freedesktop.Application"])
        #expect(busctl.status == 0, "\(busctl.stderr)")
        for line in [".Activate", ".ActivateAction", ".Open"] { #expect(busctl.stdout.contains(line), "\(busctl.stdout)") }
    }

    @Test("the bus killed: the socket is still served; the bus back: the daemon owns its name again and answers")
    func busGoesAndComes() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        bus.kill()
        try waitUntil("the daemon notices", within: 20) { h.daemonOutput.contains("the session bus connection ended") }
        let meanwhile = try h.lsopen("--json", "todolist://meanwhile")
        #expect(meanwhile.status == 0, "\(meanwhile.stderr)")
        let owned = h.daemonOutput.components(separatedBy: "owns \(Self.name)").count - 1
        try bus.start()
        try waitUntil("the daemon owns its name again", within: 40) {
            h.daemonOutput.components(separatedBy: "owns \(Self.name)").count - 1 > owned
        }
        let again = try gdbusOpen(["todolist://again"], bus)
        #expect(again.status == 0, "\(again.stderr)")
        try waitUntil("todolist has the URL", within: 10) { h.appOutput.contains("[todolist] host: again") }
    }

    @Test("an app's child calling Open over D-Bus speaks as that app: the URL arrives with the app as its source")
    func appChildSpeaksAsApp() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let out = try AppIdentityTests.scratchFolder("lsbus")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let script = "/usr/bin/gdbus call --address \(bus.address) --dest \(Self.name) --object-path \(Self.path) --method org.freedesktop.Application.Open \"['alpha:fromchild']\" '{}' >\(out)/gdbus.out 2>&1; echo $? >\(out)/status"
        let h = try DaemonHarness(apps: [.test("alpha"), .test("zevil", "--child-run=\(script)")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }
        #expect(try h.lsopen("zevil:go").status == 0)
        try waitUntil("the child's call was answered", within: 30) { FileManager.default.fileExists(atPath: out + "/status") }
        let status = (try? String(contentsOfFile: out + "/status", encoding: .utf8)) ?? ""
        #expect(status == "0\n", "\((try? String(contentsOfFile: out + "/gdbus.out", encoding: .utf8)) ?? "")")
        #expect(h.eventNames().contains { $0.contains("url=alpha:fromchild source=test.zevil") }, "\(h.eventNames())")
        #expect(!h.eventNames().contains { $0.contains("url=alpha:fromchild source=org.swift-launch-services.lsopen") })
    }

    @Test("no session bus: said once, and the socket is served")
    func noBus() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let run = try h.lsopen("alpha:x")
        #expect(run.status == 0, "\(run.stderr)")
        try waitUntil("the daemon says it is not on the bus", within: 10) { h.daemonOutput.contains("not on the session bus") }
        // A retry or two later (1 s, then 2 s), still said only once.
        try waitUntil("a retry", within: 10) { h.daemonOutput.contains("session bus still unreachable") }
        #expect(h.daemonOutput.components(separatedBy: "not on the session bus").count == 2, "\(h.daemonOutput)")
    }
}
