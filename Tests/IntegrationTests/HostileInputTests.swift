import Foundation
import Testing

/// Input nested deep enough to overflow a recursive parser's stack (an Info.plist crashed the
/// daemon this way) is refused with a named error, and the daemon keeps serving.
@Suite("Hostile input does not crash the daemon")
struct HostileInputTests {
    @Test("lsctl register of a bundle whose Info.plist nests 10,000 levels is refused")
    func deepInfoPlist() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let folder = h.root + "/loose/deep.app"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let deep = String(repeating: "<array>", count: 10_000) + String(repeating: "</array>", count: 10_000)
        let plist = TestApp.test("deep").plist.replacingOccurrences(of: "<dict>\n", with: "<dict>\n<key>Deep</key>\(deep)\n")
        #expect(plist.contains("<key>Deep</key>"))
        try plist.write(toFile: folder + "/Info.plist", atomically: true, encoding: .utf8)
        try DaemonHarness.placeExecutable("lstestapp", at: folder + "/lstestapp")
        let register = try h.run("lsctl", ["register", folder])
        #expect(register.status == 1)
        #expect(register.stderr.contains("Info.plist nests arrays and dictionaries deeper than the limit of 32 levels"), "\(register.stderr)")
        #expect(isAlive(h.daemonPID))
        #expect(try h.lsctl("status").status == 0)
    }

    @Test("a public.json pasteboard item nested 100,000 levels is refused")
    func deepJSON() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let copy = try h.shell(#"yes '[' | head -n 100000 | tr -d '\n' | "$LSCTL" pasteboard copy --name deep --type public.json"#)
        #expect(copy.status == 1)
        #expect(copy.stderr.contains("nesting depth > 512"), "\(copy.stderr)")
        #expect(isAlive(h.daemonPID))
        #expect(try h.lsctl("pasteboard", "copy", "--name", "deep", "--type", "public.json", "--text", "[[1]]").status == 0)
    }
}
