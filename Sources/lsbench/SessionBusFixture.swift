import ArgumentParser
import Foundation
import LaunchServicesTesting

/// What the session-bus rows run against: a daemon of their own on the bench's private bus
/// (its `DBUS_SESSION_BUS_ADDRESS`, so it owns `org.swift_launch_services.LaunchServices`
/// there), with two native apps in an apps folder of its own, both started (warm) before any
/// sample: `xyz` (the warm open's app, for `Open` over D-Bus) and `lstestapp` as
/// `bench.busapp` for the scheme `lsbenchbus`, which writes one line per URL to its log with
/// its own CLOCK_MONOTONIC reading first (`--clock=monotonic`): the end point of the `gio
/// open` rows, when the URL reached the app.
///
/// And the two desktop setups `gio open` reads, in private XDG folders (the variables that
/// would lead elsewhere dropped, as for the desktop peers), differing only in
/// `XDG_DATA_HOME` and `XDG_CONFIG_HOME`:
/// - *dbus*: what `lsctl export-xdg --lsopen …/lsopen` writes with the daemon running:
///   `org.swift_launch_services.LaunchServices.desktop` (`DBusActivatable=true`,
///   `Exec=…/lsopen %u`) and `mimeapps.list` naming it for every registered scheme;
/// - *exec*: the same two files with the `DBusActivatable=true` line taken out, so GLib runs
///   `Exec=…/lsopen %u` (which reaches the daemon through `LAUNCHSERVICES_SOCKET`).
struct SessionBusFixture {
    static let scheme = "lsbenchbus"
    static let testApp = "bench.busapp"
    let folder: String
    let daemon: DaemonProcess
    /// The daemon's socket and the private bus, for lsopen, lsctl and the clients.
    let environment: [String: String]
    /// `gio open`'s environment for each route.
    let dbusRoute: [String: String]
    let execRoute: [String: String]
    /// `bench.busapp`'s log: "NANOSECONDS PID open url=URL …" per URL.
    let appLog: String

    /// Writes the apps, starts the daemon (at most 30 s), opens both apps once, exports.
    init(folder: String, bus: DBusPeers.Bus, binDir: String, updateDesktopDatabase: String?) throws {
        self.folder = folder
        appLog = folder + "/busapp.log"
        let apps = folder + "/apps"
        try BundleFiles.write(bundle: apps + "/xyz.app", infoPlist: BundleFiles.infoPlist(id: "bench.xyz", executable: "xyz", schemes: ["xyz"]),
                              executable: binDir + "/xyz")
        let busapp = apps + "/busapp.app"
        try BundleFiles.write(bundle: busapp, infoPlist: BundleFiles.infoPlist(id: Self.testApp, executable: "lstestapp", schemes: [Self.scheme]),
                              executable: binDir + "/lstestapp")
        try "--log=\(appLog)\n--clock=monotonic\n".write(toFile: busapp + "/test-behavior", atomically: true, encoding: .utf8)
        let socket = folder + "/socket"
        do {
            daemon = try DaemonProcess(executable: binDir + "/launchservicesd", socket: socket,
                                       arguments: ["--apps", apps, "--state", folder + "/state", "--log-level", "warning"],
                                       environment: bus.environment, log: folder + "/daemon.log", timeout: 30, poll: 2_000)
        } catch {
            throw DBusPeers.Unavailable(reason: "the daemon for the session-bus rows did not start: \(error)")
        }
        environment = bus.environment.merging(["LAUNCHSERVICES_SOCKET": socket]) { $1 }
        do {
            for url in ["xyz:warmup", "\(Self.scheme):x/warmup"] {
                let run = try ChildProcess.run(binDir + "/lsopen", [url], environment: environment, scratch: folder, timeout: 30)
                guard run.status == 0 else { throw DBusPeers.Unavailable(reason: "lsopen \(url) failed with status \(run.status): \(run.stdout)\(run.stderr)") }
            }
            var base = environment
            for key in ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "DESKTOP_SESSION", "DESKTOP", "KDE_FULL_SESSION", "KDE_SESSION_VERSION", "GNOME_DESKTOP_SESSION_ID",
                        "MATE_DESKTOP_SESSION_ID", "LXQT_SESSION_CONFIG", "SESSION_MANAGER", "TERMINAL"] {
                base[key] = nil
            }
            for key in base.keys where key.hasPrefix("XDG_") && key != "XDG_RUNTIME_DIR" { base[key] = nil }
            for (key, name) in [("XDG_DATA_DIRS", "data-dirs"), ("XDG_CONFIG_DIRS", "config-dirs"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state-home"), ("HOME", "home")] {
                try Self.makeFolder(folder + "/" + name)
                base[key] = folder + "/" + name
            }
            func route(_ name: String) throws -> [String: String] {
                var environment = base
                environment["XDG_DATA_HOME"] = folder + "/\(name)-data"
                environment["XDG_CONFIG_HOME"] = folder + "/\(name)-config"
                try Self.makeFolder(folder + "/\(name)-data/applications")
                try Self.makeFolder(folder + "/\(name)-config")
                return environment
            }
            dbusRoute = try route("dbus")
            execRoute = try route("exec")
            try Self.export(binDir: binDir, dbus: dbusRoute, exec: execRoute, scratch: folder, updateDesktopDatabase: updateDesktopDatabase)
        } catch {
            daemon.stop()
            throw error
        }
    }

    static let entry = "org.swift_launch_services.LaunchServices.desktop"

    /// `lsctl export-xdg` into the dbus route's folders (checked to declare the scheme, to be
    /// DBusActivatable and to be the scheme's default), then the same files without the
    /// `DBusActivatable=true` line into the exec route's; `update-desktop-database` on both
    /// when given.
    static func export(binDir: String, dbus: [String: String], exec: [String: String], scratch: String, updateDesktopDatabase: String?) throws {
        let run = try ChildProcess.run(binDir + "/lsctl", ["export-xdg", "--lsopen", binDir + "/lsopen"], environment: dbus, scratch: scratch, timeout: 30)
        guard run.status == 0 else { throw DBusPeers.Unavailable(reason: "lsctl export-xdg failed with status \(run.status): \(run.stderr)") }
        let (dbusData, dbusConfig) = (dbus["XDG_DATA_HOME"] ?? "", dbus["XDG_CONFIG_HOME"] ?? "")
        let (execData, execConfig) = (exec["XDG_DATA_HOME"] ?? "", exec["XDG_CONFIG_HOME"] ?? "")
        let desktop = try String(contentsOfFile: dbusData + "/applications/" + entry, encoding: .utf8)
        let mimeapps = try String(contentsOfFile: dbusConfig + "/mimeapps.list", encoding: .utf8)
        let lines = desktop.components(separatedBy: "\n")
        guard lines.contains("DBusActivatable=true"), lines.contains(where: { $0.hasPrefix("MimeType=") && $0.contains("x-scheme-handler/\(scheme);") }),
              lines.contains("Exec=\(binDir)/lsopen %u"), mimeapps.contains("x-scheme-handler/\(scheme)=\(entry)") else {
            throw DBusPeers.Unavailable(reason: "lsctl export-xdg did not write the expected entry:\n\(desktop)\n\(mimeapps)")
        }
        try lines.filter { $0 != "DBusActivatable=true" }.joined(separator: "\n").write(toFile: execData + "/applications/" + entry, atomically: true, encoding: .utf8)
        try mimeapps.write(toFile: execConfig + "/mimeapps.list", atomically: true, encoding: .utf8)
        if let updateDesktopDatabase {
            for (environment, data) in [(dbus, dbusData), (exec, execData)] {
                _ = try ChildProcess.run(updateDesktopDatabase, [data + "/applications"], environment: environment, scratch: scratch, timeout: 30)
            }
        }
    }

    static func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func stop() { daemon.stop() }

    /// `bench.busapp`'s line for `url`: its clock reading and PID (looked for at most 10 s).
    func appLine(for url: String) throws -> (time: UInt64, pid: pid_t) {
        let deadline = DesktopPeers.now() + 10_000_000_000
        while true {
            let lines = ((try? String(contentsOfFile: appLog, encoding: .utf8)) ?? "").split(separator: "\n")
            if let line = lines.last(where: { $0.contains(" open url=\(url) ") }) {
                let fields = line.split(separator: " ")
                guard fields.count >= 3, let time = UInt64(fields[0]), let pid = pid_t(fields[1]) else { throw ValidationError("bad app line: \(line)") }
                return (time, pid)
            }
            guard DesktopPeers.now() < deadline else { throw DBusPeers.Unavailable(reason: "\(Self.testApp) did not get \(url) within 10 s") }
            usleep(200)  // a file poll, at most 10 s; the sample's end is the app's own clock, not this
        }
    }
}
