import ArgumentParser
import CLaunchServicesShim
import Foundation
import LaunchServicesTesting

/// The desktop peers: how a Linux desktop opens a URL today. `gio open URL` and `xdg-open
/// URL` of a URL `lsbenchpeer:x/N` whose `x-scheme-handler/lsbenchpeer` goes to a tiny C
/// handler (`scripts/bench-peers/lsbenchpeer_handler.c`), timed from just before the tool is
/// spawned until the handler's own CLOCK_MONOTONIC reading when it got the URL (delivered,
/// not exited); and `xdg-mime query default x-scheme-handler/lsbenchpeer`, a whole process.
///
/// Everything is private to the bench: the handler's `.desktop` file and `mimeapps.list` live
/// in XDG folders in its temporary folder (`XDG_DATA_HOME`, `XDG_DATA_DIRS`, `XDG_CONFIG_HOME`,
/// `XDG_CONFIG_DIRS`, `HOME`), the session bus is the bench's private dbus-daemon, and the
/// variables that would lead elsewhere (`DISPLAY`, `BROWSER`, the desktop-session ones) are
/// dropped. `xdg-open` only looks up x-scheme-handler when it believes there is a display, so
/// it gets `WAYLAND_DISPLAY` naming a socket that does not exist in the private runtime folder
/// (nothing here connects to it); it then runs in its generic mode (no desktop detected).
struct DesktopPeers {
    static let scheme = "lsbenchpeer"
    /// The scheme of the same handler told to stay alive (`Exec=… %u stay`).
    static let stayingScheme = "lsbenchstay"
    let handler: String
    let folder: String
    /// The handler's log: one line "NANOSECONDS PID URL" per URL it was given.
    let log: String
    let environment: [String: String]

    /// Writes the private XDG folders (and runs `update-desktop-database` on the applications
    /// folder when given) for processes that otherwise get `base` (the private bus's environment).
    init(peerBinDir: String, work: String, base: [String: String], updateDesktopDatabase: String?) throws {
        handler = peerBinDir + "/lsbenchpeer_handler"
        folder = work + "/desktop"
        log = folder + "/handler.log"
        guard FileManager.default.isExecutableFile(atPath: handler) else { throw DBusPeers.Unavailable(reason: "\(handler) was not built") }
        var environment = base
        for key in ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "DESKTOP_SESSION", "DESKTOP", "KDE_FULL_SESSION", "KDE_SESSION_VERSION", "GNOME_DESKTOP_SESSION_ID",
                    "MATE_DESKTOP_SESSION_ID", "LXQT_SESSION_CONFIG", "SESSION_MANAGER", "TERMINAL"] {
            environment[key] = nil
        }
        for key in environment.keys where key.hasPrefix("XDG_") && key != "XDG_RUNTIME_DIR" { environment[key] = nil }
        for (key, name) in [("XDG_DATA_HOME", "data"), ("XDG_DATA_DIRS", "data-dirs"), ("XDG_CONFIG_HOME", "config"), ("XDG_CONFIG_DIRS", "config-dirs"),
                            ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("HOME", "home")] {
            let path = folder + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment[key] = path
        }
        environment["WAYLAND_DISPLAY"] = "lsbench-no-display"
        self.environment = environment
        let applications = folder + "/data/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try """
        [Desktop Entry]
        Type=Application
        Name=lsbench peer handler
        Exec=\(handler) \(log) %u
        MimeType=x-scheme-handler/\(Self.scheme);
        NoDisplay=true

        """.write(toFile: applications + "/\(Self.scheme)-handler.desktop", atomically: true, encoding: .utf8)
        // The handler that stays alive (the desktop rows' `running` outcome; only lsopen opens it).
        try """
        [Desktop Entry]
        Type=Application
        Name=lsbench peer handler that stays
        Exec=\(handler) \(log) %u stay
        MimeType=x-scheme-handler/\(Self.stayingScheme);
        NoDisplay=true

        """.write(toFile: applications + "/\(Self.stayingScheme)-handler.desktop", atomically: true, encoding: .utf8)
        try """
        [Default Applications]
        x-scheme-handler/\(Self.scheme)=\(Self.scheme)-handler.desktop
        x-scheme-handler/\(Self.stayingScheme)=\(Self.stayingScheme)-handler.desktop

        """.write(toFile: folder + "/config/mimeapps.list", atomically: true, encoding: .utf8)
        if let updateDesktopDatabase {
            _ = try ChildProcess.run(updateDesktopDatabase, [applications], environment: environment, scratch: folder, timeout: 30)
        }
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// One open with `tool` (`gio open` or `xdg-open`): the clock read, the tool spawned with
    /// `url`; the tool reaped (it must exit 0); the handler's line for that URL awaited (at
    /// most 10 s); the handler reaped by the PID on its line (the caller is a child subreaper
    /// meanwhile, so a handler the tool left behind is reparented to it); returns the
    /// handler's time − the start.
    func open(_ tool: [String], url: String, label: String) throws -> UInt64 {
        let output = folder + "/\(label).log"
        let start = Self.now()
        let child = try ChildProcess(tool[0], Array(tool.dropFirst()) + [url], environment: environment, stdout: output)
        let status = child.wait()
        guard status == 0 else { throw DBusPeers.Unavailable(reason: "\(label) \(url) exited with status \(status): \(Self.lastLine(output))") }
        let deadline = Self.now() + 10_000_000_000
        while true {
            let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
            if let line = lines.last(where: { $0.hasSuffix(" " + url) }) {
                let fields = line.split(separator: " ")
                guard fields.count >= 3, let time = UInt64(fields[0]), let pid = pid_t(fields[1]) else { throw ValidationError("bad handler line: \(line)") }
                var raw: Int32 = 0
                var rc: pid_t
                repeat { rc = waitpid(pid, &raw, 0) } while rc == -1 && errno == EINTR
                // ECHILD: the tool waited for the handler itself (xdg-open runs it in the foreground).
                return time - start
            }
            guard Self.now() < deadline else { throw DBusPeers.Unavailable(reason: "the handler did not get \(url) from \(label) within 10 s: \(Self.lastLine(output))") }
            usleep(200)
        }
    }

    /// `count` runs of `xdg-mime query default x-scheme-handler/lsbenchpeer`, each spawn to
    /// reaped exit, after one checked run (it must name the handler's desktop file).
    func queries(xdgMime: String, count: Int) throws -> [UInt64] {
        let arguments = ["query", "default", "x-scheme-handler/\(Self.scheme)"]
        let run = try ChildProcess.run(xdgMime, arguments, environment: environment, scratch: folder, timeout: 30)
        guard run.status == 0, run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.scheme)-handler.desktop" else {
            throw DBusPeers.Unavailable(reason: "xdg-mime query default answered \"\(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))\" (status \(run.status)) \(run.stderr)")
        }
        return try (0..<count).map { _ in try ChildProcess.timedRun(xdgMime, arguments, environment: environment) }
    }

    static func lastLine(_ path: String) -> String {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init) ?? "(no output)"
    }
}

/// What the project measured in the same run that the activation and desktop peers are put
/// beside: cold opens from the in-process client, whole `lsopen URL` processes with the app
/// not running, and whole `lsopen --can-open URL` processes.
struct ColdFigures {
    let cold: [UInt64]
    let lsopenCold: [UInt64]
    let canOpen: [UInt64]
}

extension LSBench {
    /// The D-Bus activation rows (on `bus`, the private dbus-daemon) and the desktop rows
    /// (whose processes use that bus as their session bus). A peer that cannot run is a note.
    func coldPeerRows(_ report: Report, peers: DBusPeers, bus: DBusPeers.Bus, ours: ColdFigures) throws {
        do {
            let activations = try peers.activations(on: bus, count: ours.cold.count)
            let row = report.row("D-Bus activation via dbus-daemon, C service, 1 call (peer)", activations)
            report.row("cold open vs D-Bus activation via dbus-daemon", ours.cold, baseline: row)
        } catch let unavailable as DBusPeers.Unavailable {
            report.note("D-Bus activation peer: skipped, \(unavailable.reason)")
        }
        try desktopPeerRows(report, peers: peers, bus: bus, ours: ours)
    }

    /// The desktop rows: `gio open` and `xdg-open` to the C handler, and beside each the
    /// project's whole `lsopen URL` with the app not running (`ours`, when measured) and
    /// `lsopen URL` to the same handler as a desktop entry (`DesktopOpenRows.swift`, sampled
    /// in turn with the peers); then `xdg-mime query default` beside `lsopen --can-open`. A
    /// peer that cannot run is a note.
    func desktopPeerRows(_ report: Report, peers: DBusPeers, bus: DBusPeers.Bus, ours: ColdFigures?) throws {
        let desktop: DesktopPeers
        do {
            desktop = try DesktopPeers(peerBinDir: peers.peerBinDir, work: peers.work, base: bus.environment, updateDesktopDatabase: updateDesktopDatabase)
        } catch let unavailable as DBusPeers.Unavailable {
            report.note("gio open, xdg-open and xdg-mime peers, and lsopen to a desktop entry: skipped, \(unavailable.reason)")
            return
        }
        let count = ours?.lsopenCold.count ?? cold
        var tools: [DesktopTool] = []
        for (tool, package, label, command) in [(gio, "libglib2.0-bin", "gio open", { [$0, "open"] }), (xdgOpen, "xdg-utils", "xdg-open", { [$0] })]
            as [(String?, String, String, (String) -> [String])] {
            guard let tool else {
                report.note("\(label) peer: skipped, \(label.split(separator: " ")[0]) is not installed (Debian package \(package))")
                continue
            }
            let samples = label == "xdg-open" ? (xdgOpenProcesses ?? max(3, count / 5)) : count
            tools.append(DesktopTool(label: label, command: command(tool), count: samples))
        }
        let taken = try desktopSamples(desktop, tools: tools, count: count, runningCount: desktopRunningOpens)
        for note in taken.notes { report.note(note) }
        for tool in taken.tools where tool.failure == nil {
            let row = report.row("\(tool.label) URL → a new handler process has it (peer)", tool.samples)
            if let ours { report.row("lsopen URL, whole process, app not running vs \(tool.label)", ours.lsopenCold, baseline: row) }
            if let figures = taken.ours {
                report.row("lsopen URL → desktop entry, exits 0: forwarded, vs \(tool.label)", figures.forwarded, baseline: row)
                report.row("lsopen → desktop, forwarded, handler has it, vs \(tool.label)", figures.forwardedDelivered, baseline: row)
                if !figures.running.isEmpty {
                    report.row("lsopen URL → desktop entry, stays: running, vs \(tool.label)", figures.running, baseline: row)
                    report.row("lsopen → desktop, running, handler has it, vs \(tool.label)", figures.runningDelivered, baseline: row)
                }
            }
        }
        if tools.isEmpty, let figures = taken.ours {
            report.row("lsopen URL → desktop entry, exits 0: forwarded", figures.forwarded)
            report.row("lsopen URL → desktop entry, stays: running", figures.running)
        }
        guard let ours else { return }
        guard let xdgMime else {
            report.note("xdg-mime peer: skipped, xdg-mime is not installed (Debian package xdg-utils)")
            return
        }
        do {
            let samples = try desktop.queries(xdgMime: xdgMime, count: ours.canOpen.count)
            let row = report.row("xdg-mime query default x-scheme-handler, whole process (peer)", samples)
            report.row("lsopen --can-open URL, whole process vs xdg-mime query", ours.canOpen, baseline: row)
        } catch let unavailable as DBusPeers.Unavailable {
            report.note("xdg-mime peer: skipped, \(unavailable.reason)")
        }
    }
}
