import CLaunchServicesShim
import Foundation
import LaunchServicesTesting
import Testing

/// A desktop app is the user's: it outlives the daemon that started it. A real daemon is
/// stopped with SIGTERM (its clean stop, which ends every native app it launched) and
/// started again; the desktop app it started runs throughout, and the new daemon opens the
/// scheme again. The test ends the app by its pid.
@Suite("Desktop apps: alive after the daemon stops and starts again", .serialized)
struct DesktopDaemonRestartTests {
    @Test("a desktop app still runs after launchservicesd is stopped (SIGTERM) and started again; a native app does not")
    func outlivesDaemonRestart() throws {
        // Sanitizer builds start desktop apps as the daemon's children (documented): they end with it.
        guard ls_desktop_launch_uses_siblings() == 1 else { return }
        let s = try DesktopSession(graceSeconds: 0.3, nativeApps: [.test("native", schemes: ["x-native"])]) { s in
            try s.entry("org.example.Browser.desktop", exec: "itrecord sleep %u", schemes: ["x-web"])
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-web:before")
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("outcome") == "running", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        s.track(pid)
        #expect(try s.handler(pid: pid).arguments == ["sleep", "x-web:before"], "\(s.handlerRecords)")
        let native = try s.lsopen("--json", "x-native:before")
        #expect(native.status == 0, "\(native.said)")
        let nativePID = try #require(s.nativeAppPIDs.first)

        let daemon = s.daemonPID
        s.stopDaemon()
        #expect(!isAlive(daemon))
        #expect(s.output.contains("stopped"), "a clean stop: \(s.output.suffix(2000))")
        try waitUntil("the native app to end with the daemon", within: 30) { !isAlive(nativePID) }
        #expect(isAlive(pid), "the desktop app ended with the daemon")

        try s.startDaemon()
        #expect(isAlive(pid), "the desktop app ended when the daemon started again")
        let again = try s.lsopen("--json", "x-web:after")
        #expect(again.status == 0, "\(again.said)")
        let second = try #require(again.int("pid").map(Int32.init), "\(again.said)")
        s.track(second)
        #expect(second != pid)
        #expect(try s.handler(pid: second).arguments == ["sleep", "x-web:after"], "\(s.handlerRecords)")
        #expect(isAlive(pid) && isAlive(second))
        s.end(pid)
        s.end(second)
        #expect(!isAlive(pid) && !isAlive(second))
    }
}
