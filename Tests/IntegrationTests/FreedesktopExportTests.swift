import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// `lsctl export-xdg`, then the real `xdg-open` (Debian's xdg-utils) reaching the app.
@Suite("Freedesktop export")
struct FreedesktopExportTests {
    /// The tools' environment for one test: the harness's daemon, XDG folders of the test's
    /// own (no system data, no desktop), `BROWSER` a program that fails, no X display, and
    /// `WAYLAND_DISPLAY` as given.
    static func environment(_ h: DaemonHarness, config: String, data: String, waylandDisplay: String?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        environment["HOME"] = h.root
        environment["XDG_CONFIG_HOME"] = config
        environment["XDG_DATA_HOME"] = data
        environment["XDG_DATA_DIRS"] = h.root + "/no-system-data"
        environment["XDG_CURRENT_DESKTOP"] = nil
        environment["BROWSER"] = "/bin/false"
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = waylandDisplay
        return environment
    }

    @Test("xdg-open SCHEME:… is delivered to the registered app; other defaults are kept")
    func xdgOpen() throws {
        let h = try DaemonHarness(apps: [.test("myscheme"), .test("taken")])
        defer { h.stop() }
        let config = h.root + "/xdg-config", data = h.root + "/xdg-data"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try "[Default Applications]\nx-scheme-handler/taken=other.desktop\ntext/html=browser.desktop\n"
            .write(toFile: config + "/mimeapps.list", atomically: true, encoding: .utf8)
        // xdg-open consults scheme handlers only in a graphical session.
        let environment = Self.environment(h, config: config, data: data, waylandDisplay: "wayland-test")

        let export = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg"], environment: environment, scratch: h.root, timeout: 30)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("left alone: taken (default: other.desktop)"))
        let mimeapps = try String(contentsOfFile: config + "/mimeapps.list", encoding: .utf8)
        #expect(mimeapps.contains("x-scheme-handler/myscheme=\(DesktopEntryCheck.exportedEntryID)"))
        #expect(mimeapps.contains("x-scheme-handler/taken=other.desktop"))
        #expect(mimeapps.contains("text/html=browser.desktop"))

        let xdgOpen = try ChildProcess.run("/usr/bin/xdg-open", ["myscheme:hello"], environment: environment, scratch: h.root, timeout: 60)
        #expect(xdgOpen.status == 0, "\(xdgOpen.stdout) \(xdgOpen.stderr)")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=myscheme:hello source=org.swift-launch-services.lsopen") })

        let forced = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg", "--force"], environment: environment, scratch: h.root, timeout: 30)
        #expect(forced.status == 0)
        #expect(try String(contentsOfFile: config + "/mimeapps.list", encoding: .utf8).contains("x-scheme-handler/taken=\(DesktopEntryCheck.exportedEntryID)"))
    }

    @Test("export-xdg --json exports as without it and prints its report as one JSON object")
    func exportJSON() throws {
        let h = try DaemonHarness(apps: [.test("myscheme"), .test("taken")])
        defer { h.stop() }
        let config = h.root + "/xdg-config", data = h.root + "/xdg-data"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try "[Default Applications]\nx-scheme-handler/taken=other.desktop\n".write(toFile: config + "/mimeapps.list", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        environment["HOME"] = h.root
        environment["XDG_CONFIG_HOME"] = config
        environment["XDG_DATA_HOME"] = data

        let export = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg", "--json"], environment: environment, scratch: h.root, timeout: 30)
        #expect(export.status == 0, "\(export.stderr)")
        let desktop = data + "/applications/org.swift_launch_services.LaunchServices.desktop"
        let written = try String(contentsOfFile: desktop, encoding: .utf8)
        #expect(written.contains("MimeType=x-scheme-handler/myscheme;"))
        // GLib activates it on the session bus; xdg-open runs its Exec.
        #expect(written.contains("\nDBusActivatable=true\n") && written.contains("\nExec=\(DaemonHarness.binary("lsopen")) %u\n"), "\(written)")
        #expect(try String(contentsOfFile: config + "/mimeapps.list", encoding: .utf8).contains("x-scheme-handler/myscheme=\(DesktopEntryCheck.exportedEntryID)"))
        let report = try #require(export.json, "one JSON object: \(export.stdout)")
        #expect(report["exported"] as? [String] == ["myscheme"])
        #expect(report["replaced"] as? [String] == [])
        #expect(report["desktopFile"] as? String == desktop)
        #expect(report["mimeapps"] as? String == config + "/mimeapps.list")
        let skipped = try #require(report["skipped"] as? [[String: Any]])
        #expect(skipped.count == 1)
        #expect(skipped.first?["scheme"] as? String == "taken")
        #expect(skipped.first?["default"] as? String == "other.desktop")
    }

    @Test("an earlier version's export (swift-launch-services-lsopen.desktop) is replaced: its file removed, its defaults renamed, a stale one dropped, others kept")
    func replacesEarlierExport() throws {
        let h = try DaemonHarness(apps: [.test("myscheme")])
        defer { h.stop() }
        let config = h.root + "/xdg-config", data = h.root + "/xdg-data"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: data + "/applications", withIntermediateDirectories: true)
        let earlier = data + "/applications/swift-launch-services-lsopen.desktop"
        try "[Desktop Entry]\nType=Application\nExec=lsopen %u\nMimeType=x-scheme-handler/myscheme;x-scheme-handler/gone;\n"
            .write(toFile: earlier, atomically: true, encoding: .utf8)
        try "[Default Applications]\nx-scheme-handler/myscheme=swift-launch-services-lsopen.desktop\nx-scheme-handler/gone=swift-launch-services-lsopen.desktop\ntext/html=browser.desktop\n"
            .write(toFile: config + "/mimeapps.list", atomically: true, encoding: .utf8)
        let environment = Self.environment(h, config: config, data: data, waylandDisplay: "wayland-test")

        let export = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg"], environment: environment, scratch: h.root, timeout: 30)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("removed the earlier export \(earlier)"), "\(export.stdout)")
        #expect(!export.stdout.contains("left alone"), "an earlier export's default is ours to take: \(export.stdout)")
        #expect(!FileManager.default.fileExists(atPath: earlier))
        #expect(FileManager.default.fileExists(atPath: data + "/applications/" + DesktopEntryCheck.exportedEntryID))
        let mimeapps = try String(contentsOfFile: config + "/mimeapps.list", encoding: .utf8)
        #expect(mimeapps == "[Default Applications]\nx-scheme-handler/myscheme=\(DesktopEntryCheck.exportedEntryID)\ntext/html=browser.desktop\n", "\(mimeapps)")

        // xdg-open runs the new entry's Exec (lsopen).
        let xdgOpen = try ChildProcess.run("/usr/bin/xdg-open", ["myscheme:renamed"], environment: environment, scratch: h.root, timeout: 60)
        #expect(xdgOpen.status == 0, "\(xdgOpen.stdout) \(xdgOpen.stderr)")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=myscheme:renamed source=org.swift-launch-services.lsopen") })
    }

    @Test("headless, xdg-open ignores the exported defaults: export-xdg says so and what to do, and BROWSER=lsopen reaches the app")
    func headless() throws {
        let h = try DaemonHarness(apps: [.test("myscheme")])
        defer { h.stop() }
        let config = h.root + "/xdg-config", data = h.root + "/xdg-data"
        var environment = Self.environment(h, config: config, data: data, waylandDisplay: nil)
        let lsopen = DaemonHarness.binary("lsopen")

        let export = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg"], environment: environment, scratch: h.root, timeout: 30)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("note: neither DISPLAY nor WAYLAND_DISPLAY is set"), "\(export.stdout)")
        #expect(export.stdout.contains("export BROWSER=\(lsopen)"), "\(export.stdout)")
        let json = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg", "--json"], environment: environment, scratch: h.root, timeout: 30)
        #expect((json.json?["note"] as? String)?.contains("BROWSER=") == true, "\(json.stdout)")

        // What the note says: the defaults are not read, $BROWSER is run instead.
        let ignored = try ChildProcess.run("/usr/bin/xdg-open", ["myscheme:ignored"], environment: environment, scratch: h.root, timeout: 60)
        #expect(ignored.status != 0)
        #expect(!h.eventNames().contains { $0.hasPrefix("open url=myscheme:ignored") })
        environment["BROWSER"] = lsopen
        let reached = try ChildProcess.run("/usr/bin/xdg-open", ["myscheme:reached"], environment: environment, scratch: h.root, timeout: 60)
        #expect(reached.status == 0, "\(reached.stdout) \(reached.stderr)")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=myscheme:reached source=org.swift-launch-services.lsopen") })

        environment["WAYLAND_DISPLAY"] = "wayland-test"
        let graphical = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg"], environment: environment, scratch: h.root, timeout: 30)
        #expect(!graphical.stdout.contains("note:"), "in a graphical session xdg-open reads the defaults: \(graphical.stdout)")
    }
}
