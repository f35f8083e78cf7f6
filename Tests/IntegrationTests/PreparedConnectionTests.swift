import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// Launches on the app connection the daemon makes ahead of them (`PreparedAppConnection`):
/// each cold open uses the one made after the launch before, and none is left behind.
@Suite("Launches on connections prepared ahead")
struct PreparedConnectionTests {
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
            // The next connection is made shortly after each launch; the killed app's
            // descriptors (its connection, pidfd, log pipe) close as its exit is handled.
            if let settled {
                try h.eventually("the daemon holds \(settled) descriptors again after cold open \(i)", within: 5) {
                    DescriptorLimit.openDescriptors(h.daemonPID) == settled
                }
            } else {
                usleep(300_000)
                settled = DescriptorLimit.openDescriptors(h.daemonPID)
            }
        }
    }
}
