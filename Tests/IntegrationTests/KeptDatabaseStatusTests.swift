import Foundation
import LaunchServicesTesting
import Testing

/// A damaged database set aside stays the user's to deal with: `lsctl status` names the kept
/// file at every start, from the files in the state folder, until the user removes it.
@Suite("Kept databases in lsctl status")
struct KeptDatabaseStatusTests {
    func damaged(_ h: DaemonHarness) throws -> [[String: Any]] {
        try h.lsctl("status", "--json").json?["damagedDatabases"] as? [[String: Any]] ?? []
    }

    @Test("a kept file is named in lsctl status after a restart, with when it was set aside, until it is removed")
    func keptFileNamedUntilRemoved() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let path = state + "/registry.sqlite"
        try h.restart(signal: SIGTERM, within: 5) {
            try DamagedDatabaseTests().checkpoint(path)
            _ = try DamagedDatabaseTests.Damage.truncated.apply(to: path)
        }
        let first = try damaged(h)
        let keptAs = try #require(first.first?["keptAs"] as? String, "\(first)")
        let time = try #require(first.first?["time"] as? String)

        // Another start: nothing is damaged now, and the kept file is still named, with the
        // time of the start that set it aside.
        try h.restart(signal: SIGTERM, within: 5)
        let again = try damaged(h)
        #expect(again.count == 1, "\(again)")
        #expect(again.first?["keptAs"] as? String == keptAs && again.first?["file"] as? String == path, "\(again)")
        let when = again.first?["time"] as? String ?? ""
        #expect(when.prefix(19) == time.prefix(19), "set aside at \(time), named at \(when)")
        let lost = again.first?["lost"] as? String ?? ""
        #expect(lost.contains(String(time.prefix(19))), "the log of that start says what was lost: \(again)")
        let text = try h.lsctl("status").stdout
        #expect(text.contains(keptAs), "\(text)")

        // The user removes it: status no longer names it, without a restart.
        try FileManager.default.removeItem(atPath: keptAs)
        try h.eventually("lsctl status no longer names the removed file") { try damaged(h).isEmpty }
        #expect(!(try h.lsctl("status").stdout.contains(".damaged-")))
        // And a kept file that appears (put back by the user, say) is named again.
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: keptAs))
        try h.eventually("lsctl status names the file again") { try damaged(h).first?["keptAs"] as? String == keptAs }
    }
}
