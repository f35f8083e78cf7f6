import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// Launches on the app connection the daemon makes ahead of them (`PreparedAppConnection`):
/// each cold open uses the one made after the launch before, and none is left behind.
@Suite("Launches on connections prepared ahead")
struct PreparedConnectionTests {
    /// After the first of a series of opens: the daemon's descriptor count, once the
    /// connection it makes 10 ms after a launch is there. After each later one: waits (5 s at
    /// most) until the daemon holds that many again, and fails naming `what` if it does not.
    private func descriptorsSettle(_ h: DaemonHarness, _ settled: inout Int?, after what: String) throws {
        if let settled {
            try h.eventually("the daemon holds \(settled) descriptors again after \(what)", within: 5) {
                DescriptorLimit.openDescriptors(h.daemonPID) == settled
            }
        } else {
            usleep(300_000)
            settled = DescriptorLimit.openDescriptors(h.daemonPID)
        }
    }

    @Test("five cold opens in a row, each after the app before was killed: every one launches and delivers, and the daemon then holds the descriptors it held after the first")
    func coldOpensInARow() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        var settled: Int?
        for i in 0..<5 {
            let client = try LaunchServicesClient(socketPath: h.socket, program: "prepared-connection-tests")
            let outcome = try client.open("alpha:cold/\(i)", timeout: .seconds(30))
            client.close()
            #expect(outcome.opened, "open \(i): \(outcome.error?.message ?? "")")
            #expect(outcome.launched, "open \(i) did not launch")
            #expect(outcome.timings.map(\.phase) == [.launch, .willFinishLaunching, .didFinishLaunching, .openURL])
            try h.eventually("alpha has the URL of open \(i)") { h.eventNames().contains { $0.hasPrefix("open url=alpha:cold/\(i) ") } }
            let pid = try #require(try h.running().first { $0.id == "test.alpha" }?.pid)
            kill(pid, SIGKILL)
            try h.eventually("the daemon saw alpha \(pid) go") { try !h.running().contains { $0.pid == pid } }
            // The killed app's descriptors (its connection, pidfd, log pipe) close as its
            // exit is handled.
            try descriptorsSettle(h, &settled, after: "cold open \(i)")
        }
    }

    @Test("spawns that fail (an executable the kernel cannot run), each on the connection prepared ahead: the opens fail as launchFailed, and the daemon holds after the third the descriptors it held after the first")
    func failedSpawns() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        // Still an executable file in its bundle (the registration stands), but not a program:
        // execve fails with ENOEXEC.
        let executable = h.appsFolder + "/alpha.app/lstestapp"
        try FileManager.default.removeItem(atPath: executable)
        try "not a program\n".write(toFile: executable, atomically: false, encoding: .utf8)
        #expect(chmod(executable, 0o755) == 0)
        // The first failure also starts what lives as long as the daemon (the app watch
        // thread's epoll): the count after it is the one to keep.
        var settled: Int?
        for i in 0..<3 {
            let client = try LaunchServicesClient(socketPath: h.socket, program: "prepared-connection-tests")
            let outcome = try client.open("alpha:fail/\(i)", timeout: .seconds(30))
            client.close()
            #expect(!outcome.opened)
            #expect(outcome.error?.code == .launchFailed, "open \(i): \(outcome.error?.message ?? "")")
            // The connection that replaces the one the failure discarded is made 10 ms later.
            try descriptorsSettle(h, &settled, after: "failed spawn \(i)")
        }
    }
}
