import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// A real `systemd --user` manager, the real installer, socket activation, STATUS, restart
/// after SIGKILL and the watchdog. The manager runs with a private HOME and runtime folder,
/// is stopped by its PID, and `/run/systemd/system` is removed only if this test made it.
@Suite("systemd user service", .serialized)
struct SystemdUserServiceTests {
    @Test("install, socket activation, status, SIGKILL restart, watchdog restart, uninstall")
    func userService() throws {
        let m = try UserManager()
        defer { m.stop() }

        let install = try m.run(m.repo + "/scripts/install-user-service", ["--bin-dir", DaemonHarness.binDirectory])
        #expect(install.status == 0, "installer: \(install.stdout) \(install.stderr)")
        let units = m.home + "/.config/systemd/user"
        #expect(FileManager.default.fileExists(atPath: units + "/launchservicesd.service"))
        // The D-Bus service: the bus asks systemd for the unit, or runs the installed daemon.
        let dbusService = m.home + "/.local/share/dbus-1/services/\(LaunchServicesBus.name).service"
        let dbusServiceText = (try? String(contentsOfFile: dbusService, encoding: .utf8)) ?? ""
        #expect(dbusServiceText.contains("[D-BUS Service]\nName=\(LaunchServicesBus.name)\nExec=\(m.home)/.local/bin/launchservicesd\nSystemdService=launchservicesd.service\n"), "\(dbusServiceText)")

        // Man pages, completions, --version, stripped binaries.
        let installed = m.installedCommandLineFiles()
        for path in installed { #expect(FileManager.default.fileExists(atPath: path), "not installed: \(path)") }
        let manual = try m.run("/usr/bin/man", ["-l", m.home + "/.local/share/man/man1/lsopen.1"])
        #expect(manual.status == 0 && manual.stdout.contains("LSOPEN(1)"), "man -l: \(manual.stderr)")
        var manEnvironment = UserManager.environment(home: m.home, runtime: m.runtime)
        manEnvironment["MANPATH"] = m.home + "/.local/share/man:"
        let byName = try ChildProcess.run("/usr/bin/man", ["lsopen"], environment: manEnvironment, scratch: m.home, timeout: 60)
        #expect(byName.status == 0 && byName.stdout.contains("LSOPEN(1)"), "MANPATH=… man lsopen: \(byName.stderr)")
        let bashCompletion = (try? String(contentsOfFile: m.home + "/.local/share/bash-completion/completions/lsopen", encoding: .utf8)) ?? ""
        #expect(bashCompletion.contains("complete") && bashCompletion.contains("lsopen"))
        for tool in UserManager.tools {
            let version = try m.run(m.home + "/.local/bin/" + tool, ["--version"])
            #expect(version.status == 0 && version.stdout.trimmed == LaunchServicesVersion.current, "\(tool) --version: \(version.stdout) \(version.stderr)")
            let sections = try m.run("/usr/bin/readelf", ["-S", "-W", m.home + "/.local/bin/" + tool])
            #expect(sections.status == 0 && sections.stdout.contains(".text"), "readelf: \(sections.stderr)")
            #expect(!sections.stdout.contains(".symtab"), "\(tool) is installed unstripped")
        }

        // The units as shipped verify clean once the binary they name is installed.
        let verify = try m.run("/usr/bin/systemd-analyze", ["--user", "verify", m.repo + "/systemd/launchservicesd.service", m.repo + "/systemd/launchservicesd.socket"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")

        // Socket activation: listening, but no daemon until the first lsopen.
        #expect(try m.systemctl("is-active", "launchservicesd.socket").stdout.trimmed == "active")
        #expect(try m.systemctl("is-active", "launchservicesd.service").stdout.trimmed != "active")
        let first = try m.run(m.home + "/.local/bin/lsopen", ["--json", "todolist://www.acme.com?Quarterly%20Report#200806231300"])
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        #expect(try m.systemctl("is-active", "launchservicesd.service").stdout.trimmed == "active")

        // STATUS= text in systemctl status.
        try m.eventually("STATUS shows live figures") {
            try m.systemctl("status", "--no-pager", "launchservicesd").stdout.contains("Status: \"8 apps registered, 1 running, 1 opens served\"")
        }

        // App output: into the journal (identifier = bundle id) when journald takes streams
        // here; where it does not (a container without journald), into the log files.
        let lsctl = m.home + "/.local/bin/lsctl"
        let status = try m.run(lsctl, ["status", "--json"]).decode(StatusReport.self)
        let logs = try m.run(lsctl, ["logs", "com.acme.todolist"])
        #expect(logs.status == 0, "\(logs.stdout) \(logs.stderr)")
        if status.appLogs == "journal" {
            #expect(logs.stdout == "journalctl --user -t com.acme.todolist\n")
            try m.eventually("the app's line is in the journal") {
                try m.run("/usr/bin/journalctl", ["--user", "-t", "com.acme.todolist", "--no-pager", "-o", "cat"]).stdout.contains("[todolist] host: www.acme.com")
            }
        } else {
            #expect(status.appLogs?.hasSuffix("/launchservices/logs") == true, "\(status.appLogs ?? "no appLogs")")
            try m.eventually("the app's line is in its log file") {
                try m.run(lsctl, ["logs", "com.acme.todolist"]).stdout.contains("[todolist] host: www.acme.com")
            }
        }

        // SIGKILL: systemd restarts it, the next open works, no registration is lost.
        let killed = try m.mainPID()
        kill(killed, SIGKILL)
        try m.eventually("systemd restarts the daemon") { let pid = try m.mainPID(); return pid != 0 && pid != killed }
        let afterKill = try m.run(m.home + "/.local/bin/lsopen", ["xyz:after-kill"])
        #expect(afterKill.status == 0, "\(afterKill.stderr)")
        let apps = try m.run(m.home + "/.local/bin/lsctl", ["apps", "--json"])
        #expect(apps.stdout.contains("com.acme.todolist") && apps.stdout.contains("com.sadun.xyz"))

        // Watchdog: a daemon whose loop stalls stops pinging and is restarted.
        let dropIn = units + "/launchservicesd.service.d"
        try FileManager.default.createDirectory(atPath: dropIn, withIntermediateDirectories: true)
        try "[Service]\nEnvironment=LAUNCHSERVICES_DEBUG_STALL=1\nWatchdogSec=2s\n".write(toFile: dropIn + "/watchdog-test.conf", atomically: true, encoding: .utf8)
        #expect(try m.systemctl("daemon-reload").status == 0)
        #expect(try m.systemctl("restart", "launchservicesd.service").status == 0)
        let stalled = try m.mainPID()
        let stall = try m.run(m.home + "/.local/bin/lsctl", ["debug-stall"])
        #expect(stall.status == 0, "\(stall.stderr)")
        try m.eventually("the watchdog restarts the stalled daemon", within: 30) {
            let pid = try m.mainPID()
            return pid != 0 && pid != stalled && !isAlive(stalled)
        }
        #expect(try m.run(m.home + "/.local/bin/lsopen", ["xyz:after-watchdog"]).status == 0)

        // Reinstalling over an earlier version's xdg export replaces it with today's entry.
        let applications = m.home + "/.local/share/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nExec=lsopen %u\nMimeType=x-scheme-handler/xyz;\n".write(toFile: applications + "/swift-launch-services-lsopen.desktop", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: m.home + "/.config", withIntermediateDirectories: true)
        try "[Default Applications]\nx-scheme-handler/xyz=swift-launch-services-lsopen.desktop\ntext/html=browser.desktop\n".write(toFile: m.home + "/.config/mimeapps.list", atomically: true, encoding: .utf8)
        let reinstall = try m.run(m.repo + "/scripts/install-user-service", ["--bin-dir", DaemonHarness.binDirectory])
        #expect(reinstall.status == 0, "installer: \(reinstall.stdout) \(reinstall.stderr)")
        #expect(!FileManager.default.fileExists(atPath: applications + "/swift-launch-services-lsopen.desktop"), "\(reinstall.stdout)")
        let exported = (try? String(contentsOfFile: applications + "/\(LaunchServicesBus.name).desktop", encoding: .utf8)) ?? ""
        #expect(exported.contains("DBusActivatable=true") && exported.contains("Exec=\(m.home)/.local/bin/lsopen %u"), "\(exported)")
        let mimeapps = (try? String(contentsOfFile: m.home + "/.config/mimeapps.list", encoding: .utf8)) ?? ""
        #expect(mimeapps.contains("x-scheme-handler/xyz=\(LaunchServicesBus.name).desktop") && !mimeapps.contains("swift-launch-services-lsopen"), "\(mimeapps)")

        // Uninstall reverses the install.
        let uninstall = try m.run(m.repo + "/scripts/install-user-service", ["--uninstall", "--purge"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(!FileManager.default.fileExists(atPath: units + "/launchservicesd.service"))
        #expect(!FileManager.default.fileExists(atPath: m.home + "/.local/bin/lsopen"))
        for path in installed { #expect(!FileManager.default.fileExists(atPath: path), "left after --uninstall: \(path)") }
        #expect(!FileManager.default.fileExists(atPath: dbusService))
        #expect(!FileManager.default.fileExists(atPath: applications + "/\(LaunchServicesBus.name).desktop"))
        let keptMimeapps = (try? String(contentsOfFile: m.home + "/.config/mimeapps.list", encoding: .utf8)) ?? ""
        #expect(!keptMimeapps.contains("LaunchServices") && keptMimeapps.contains("text/html=browser.desktop"), "\(keptMimeapps)")
        #expect(try m.systemctl("is-active", "launchservicesd.socket").stdout.trimmed != "active")
    }
}

/// A private `systemd --user` manager (started by the test where PID 1 is not systemd, as in CI).
/// With `privateJournal` (root only) it runs in a mount namespace of its own with a journald
/// of its own (`HOME/journal`), as units that log only to the journal need (dbus-broker's
/// launcher exits at once without one); the machine's `/run` and `/var/log` are untouched.
final class UserManager {
    let home: String
    let runtime: String
    let repo: String
    private let process: ChildProcess
    private let lease: UserManagerLease

    init(privateJournal: Bool = false) throws {
        repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        home = try TemporaryFolder(prefix: "lssd").path
        runtime = home + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard FileManager.default.isExecutableFile(atPath: "/lib/systemd/systemd") else {
            throw HarnessError("/lib/systemd/systemd is missing: install systemd (apt-get install -y systemd)")
        }
        // One manager at a time, and /run/systemd/system where PID 1 is not systemd.
        lease = try UserManagerLease()
        do {
            if privateJournal {
                // The namespace's /run/systemd is a tmpfs (so the journal socket is its own);
                // the script becomes the manager, so stopping it by PID stops the manager.
                let script = home + "/start-manager"
                try """
                    #!/bin/sh
                    set -e
                    mount -t tmpfs tmpfs /run/systemd
                    mkdir -p /run/systemd/system /run/systemd/journal '\(home)/journal'
                    mount --bind '\(home)/journal' /var/log/journal
                    /lib/systemd/systemd-journald &
                    echo $! > '\(home)/journald.pid'
                    i=0
                    while [ ! -S /run/systemd/journal/socket ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
                    exec /lib/systemd/systemd --user

                    """.write(toFile: script, atomically: true, encoding: .utf8)
                chmod(script, 0o755)
                process = try ChildProcess("/usr/bin/unshare", ["--mount", "--propagation", "private", script],
                                           environment: Self.environment(home: home, runtime: runtime), stdout: home + "/manager.log")
            } else {
                process = try ChildProcess("/lib/systemd/systemd", ["--user"], environment: Self.environment(home: home, runtime: runtime),
                                           stdout: home + "/manager.log")
            }
        } catch {
            lease.release()
            throw error
        }
        do {
            try eventually("the user manager is running") {
                let state = try systemctl("is-system-running").stdout.trimmed
                return state == "running" || state == "degraded"
            }
        } catch {
            stop()
            throw error
        }
    }

    static func environment(home: String, runtime: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        // No DBUS_SESSION_BUS_ADDRESS: the manager, its units and the tools find the session
        // bus at RUNTIME/bus (a test's private one), never the user's.
        for key in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "LAUNCHSERVICES_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
                    "DBUS_SESSION_BUS_ADDRESS"] {
            environment[key] = nil
        }
        environment["HOME"] = home
        environment["XDG_RUNTIME_DIR"] = runtime
        return environment
    }

    func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 300) throws -> ToolRun {
        try ChildProcess.run(executable, arguments, environment: Self.environment(home: home, runtime: runtime), scratch: home, timeout: timeout)
    }

    func systemctl(_ arguments: String...) throws -> ToolRun {
        try run("/usr/bin/systemctl", ["--user"] + arguments, timeout: 30)
    }

    static let tools = ["launchservicesd", "lsopen", "lsctl"]

    /// What the installer puts beside each binary (default prefix, no XDG_* overrides):
    /// the man page and the bash, zsh and fish completions.
    func installedCommandLineFiles() -> [String] {
        var paths: [String] = []
        for tool in Self.tools {
            paths.append(home + "/.local/bin/" + tool)
            paths.append(home + "/.local/share/man/man1/" + tool + ".1")
            paths.append(home + "/.local/share/bash-completion/completions/" + tool)
            paths.append(home + "/.local/share/zsh/site-functions/_" + tool)
            paths.append(home + "/.config/fish/completions/" + tool + ".fish")
        }
        return paths
    }

    func mainPID() throws -> Int32 {
        Int32(try systemctl("show", "-p", "MainPID", "--value", "launchservicesd.service").stdout.trimmed) ?? 0
    }

    func eventually(_ what: String, within seconds: TimeInterval = 15, _ condition: () throws -> Bool) throws {
        try waitUntil(what, within: seconds, condition)
    }

    private var stopped = false

    /// Stops the manager by its PID (it stops its units first), then removes everything;
    /// once (a test may stop it early to see its units end, and again in its `defer`).
    func stop() {
        guard !stopped else { return }
        stopped = true
        process.stop(grace: 15)
        // The private journald outlives the manager that started it: stopped by its PID.
        if let text = try? String(contentsOfFile: home + "/journald.pid", encoding: .utf8), let journald = Int32(text.trimmed), journald > 0 {
            kill(journald, SIGTERM)
            if (try? waitUntil("the private journald ends", within: 10, { !isAlive(journald) })) == nil { kill(journald, SIGKILL) }
        }
        lease.release()
        try? FileManager.default.removeItem(atPath: home)
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
