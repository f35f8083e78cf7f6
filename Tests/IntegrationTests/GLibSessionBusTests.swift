import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// GLib's own tools reaching the daemon on a private session bus: `gio open` through the
/// entry `lsctl export-xdg` writes (`DBusActivatable`, so no process is started per URL),
/// `gapplication launch`, and the bus starting the daemon from the shipped D-Bus service file
/// when it was not running.
@Suite("GLib on the session bus", .serialized)
struct GLibSessionBusTests {
    static let name = LaunchServicesBus.name

    /// `root/bin/lsopen`, which records that it ran (into `ran`) and fails: the exported
    /// entry's `Exec`, which GLib must not run when it can call the daemon over D-Bus.
    static func recordingLsopen(in root: String) throws -> (path: String, ran: String) {
        let bin = root + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let ran = root + "/lsopen-ran"
        let path = bin + "/lsopen"
        try "#!/bin/sh\necho \"$$ $*\" >> '\(ran)'\nexit 1\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return (path, ran)
    }

    /// Who owns `name` on `bus`, by the bus's word; nil when nobody does.
    static func owner(of name: String, on bus: PrivateSessionBus) throws -> Int32? {
        let run = try ChildProcess.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                                          "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", name],
                                       environment: bus.environment, scratch: bus.root, timeout: 30)
        guard run.status == 0 else { return nil }
        // "(uint32 12345,)"
        return Int32(run.stdout.filter(\.isNumber).dropFirst(2))
    }

    @Test("gio open SCHEME:x through the exported DBusActivatable entry reaches the native app over D-Bus: the daemon names gio's process, and no lsopen ran")
    func gioOpenOverDBus() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try DaemonHarness(apps: [.test("gioscheme")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }

        let lsopen = try Self.recordingLsopen(in: bus.root)
        var environment = bus.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        environment["PATH"] = bus.root + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        let export = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["export-xdg", "--lsopen", lsopen.path], environment: environment, scratch: bus.root, timeout: 30)
        #expect(export.status == 0, "\(export.stdout) \(export.stderr)")
        let entry = try String(contentsOfFile: bus.root + "/data/applications/" + DesktopEntryCheck.exportedEntryID, encoding: .utf8)
        #expect(entry.contains("\nDBusActivatable=true\n") && entry.contains("\nExec=\(lsopen.path) %u\n"), "\(entry)")
        // GLib's own reading of the private folders: the export is the scheme's default.
        let mime = try ChildProcess.run("/usr/bin/gio", ["mime", "x-scheme-handler/gioscheme"], environment: environment, scratch: bus.root, timeout: 30)
        #expect(mime.stdout.contains(DesktopEntryCheck.exportedEntryID), "\(mime.stdout) \(mime.stderr)")

        // gio's pid, to find it in the daemon's log: the shell writes its own, then becomes gio.
        let pidFile = bus.root + "/gio.pid"
        let gio = try ChildProcess.run("/bin/sh", ["-c", "echo $$ > '\(pidFile)'; exec /usr/bin/gio open gioscheme:over-dbus"],
                                       environment: environment, scratch: bus.root, timeout: 60)
        #expect(gio.status == 0, "\(gio.stdout) \(gio.stderr)")
        try waitUntil("the app has the URL", within: 20) { h.eventNames().contains { $0.hasPrefix("open url=gioscheme:over-dbus ") } }
        let gioPID = try #require(Int32(((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(h.daemonOutput.contains("(pid \(gioPID), uid \(getuid())) speaks as org.swift-launch-services.lsopen"), "\(h.daemonOutput)")
        // The history names the route and the caller; an lsopen open after it names none.
        #expect(try h.lsopen("gioscheme:by-socket").status == 0)
        let history = try h.lsctl("history", "-n", "2", "--json").decode([HistoryEntry].self)
        #expect(history.count == 2 && history[0].via?.hasPrefix("dbus :") == true && history[0].via?.hasSuffix(" pid \(gioPID)") == true, "\(history)")
        #expect(history.count == 2 && history[1].via == nil, "\(history)")
        #expect(try h.lsctl("history", "-n", "2").stdout.contains("(via dbus :"))
        #expect(!FileManager.default.fileExists(atPath: lsopen.ran), "lsopen ran: \((try? String(contentsOfFile: lsopen.ran, encoding: .utf8)) ?? "")")

        // The recorder does fail a run that reaches it: xdg-open in a graphical session runs the Exec.
        environment["WAYLAND_DISPLAY"] = "wayland-test"
        environment["BROWSER"] = "/bin/false"
        _ = try ChildProcess.run("/usr/bin/xdg-open", ["gioscheme:by-exec"], environment: environment, scratch: bus.root, timeout: 60)
        #expect(((try? String(contentsOfFile: lsopen.ran, encoding: .utf8)) ?? "").contains("gioscheme:by-exec"), "the recorder is what the Exec runs")
    }

    @Test("not running: gapplication launch makes the bus start the daemon from the shipped D-Bus service file; it activates, and opens a URL")
    func busStartsDaemon() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try DaemonHarness(apps: [.test("actscheme")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], start: false)
        defer { h.stop() }
        var started: Int32 = 0
        defer {
            // The daemon the bus started: stopped by its PID, as the harness stops its own.
            if started > 0 {
                kill(started, SIGTERM)
                if (try? waitUntil("the activated daemon ends", within: 10, { !isAlive(started) })) == nil { kill(started, SIGKILL) }
            }
        }

        // The shipped service file, with Exec the test's daemon (its folders and flags).
        let shipped = try String(contentsOfFile: TestApp.repositoryRoot + "/config/dbus/\(Self.name).service", encoding: .utf8)
        #expect(shipped.contains("\n[D-BUS Service]\nName=\(Self.name)\nExec=@BINDIR@/launchservicesd\nSystemdService=launchservicesd.service\n"), "\(shipped)")
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let variables = h.ownEnvironment.sorted { $0.key < $1.key }.map { quoted($0.key + "=" + $0.value) }
        let script = h.root + "/start-daemon"
        try ("#!/bin/sh\nexec /usr/bin/env " + (variables + h.daemonCommandLine.map(quoted)).joined(separator: " ") + " >>\(quoted(h.daemonLog)) 2>&1\n")
            .write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try shipped.replacingOccurrences(of: "Exec=@BINDIR@/launchservicesd", with: "Exec=" + script)
            .write(toFile: bus.root + "/services/\(Self.name).service", atomically: true, encoding: .utf8)
        #expect(try Self.owner(of: Self.name, on: bus) == nil, "nobody owns the name yet")

        let launch = try ChildProcess.run("/usr/bin/gapplication", ["launch", Self.name], environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(launch.status == 0, "\(launch.stdout) \(launch.stderr)")
        started = try #require(try Self.owner(of: Self.name, on: bus), "the bus started the daemon: \(h.daemonOutput)")
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(started)/exe")
        #expect(URL(fileURLWithPath: exe).resolvingSymlinksInPath().path == URL(fileURLWithPath: DaemonHarness.binary("launchservicesd")).resolvingSymlinksInPath().path)
        try waitUntil("the daemon logged the activation", within: 10) { h.daemonOutput.contains("activated launchservicesd") }
        #expect(h.daemonOutput.contains("owns \(Self.name) on the session bus"))

        // gapplication launch NAME URL is Open([URL]); and the socket is served too.
        let open = try ChildProcess.run("/usr/bin/gapplication", ["launch", Self.name, "actscheme:by-gapplication"], environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(open.status == 0, "\(open.stdout) \(open.stderr)")
        try waitUntil("the app has the URL", within: 20) { h.eventNames().contains { $0.hasPrefix("open url=actscheme:by-gapplication ") } }
        #expect(try h.lsopen("actscheme:by-socket").status == 0)
    }
}
