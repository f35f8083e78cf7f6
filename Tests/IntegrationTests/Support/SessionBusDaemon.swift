import LaunchServicesCore
import LaunchServicesTesting

/// What the session-bus suites share: a daemon with todolist (and `extra`) on a private bus,
/// once it owns its name there, and a D-Bus tool run against that bus.
extension PrivateSessionBus {
    func daemon(apps extra: [TestApp] = []) throws -> DaemonHarness {
        let todolist = TestApp(folder: "todolist", id: "com.acme.todolist", schemes: ["todolist"], executable: "todolist")
        let h = try DaemonHarness(apps: [todolist] + extra, environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(LaunchServicesBus.name) on the session bus") }
        return h
    }

    func run(_ path: String, _ arguments: [String]) throws -> ToolRun {
        try ChildProcess.run(path, arguments, environment: environment, scratch: root, timeout: 60)
    }
}
