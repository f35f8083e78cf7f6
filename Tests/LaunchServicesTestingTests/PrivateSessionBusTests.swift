import Foundation
import LaunchServicesTesting
import Testing

/// The testing kit's `PrivateSessionBus`: a real private bus whose test app is started by
/// activation and callable by a client nobody on this project wrote (`gdbus call`), and
/// whose `remove()` stops everything it started, by PID, and removes its folder.
@Suite("PrivateSessionBus: a private bus, an activatable test app, everything stopped")
struct PrivateSessionBusTests {
    @Test("gdbus call activates the test app, which records the call; remove() ends the app and the bus and removes the folder")
    func activatesAndStops() throws {
        let bus = try PrivateSessionBus(apps: ["org.example.Kit": .answer])
        var removed = false
        defer { if !removed { bus.remove() } }
        let call = try ChildProcess.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.example.Kit", "--object-path", "/org/example/Kit",
                                                           "--method", "org.freedesktop.Application.Open", "['x-kit:a b']", "{'k': <'v'>}"],
                                        environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(call.status == 0, "gdbus call failed: \(call.stderr)")
        let opens = try bus.waitForCalls("Open", of: "org.example.Kit")
        #expect(opens.first?.uris == ["x-kit:a b"])
        #expect(opens.first?.platformData == ["k": "v"])
        let pids = bus.appPIDs
        #expect(pids.count == 1)
        bus.remove()
        removed = true
        for pid in pids {
            try PrivateSessionBus.waitFor("app \(pid) to end", within: 30) { kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z") == true }
        }
        #expect(!FileManager.default.fileExists(atPath: bus.root))
        let probe = try ChildProcess.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.example.Kit", "--object-path", "/org/example/Kit",
                                                            "--method", "org.freedesktop.Application.Activate", "{}"],
                                         environment: bus.environment, scratch: NSTemporaryDirectory(), timeout: 60)
        #expect(probe.status != 0, "the bus still answers after remove()")
    }
}
