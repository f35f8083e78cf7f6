import Foundation
import LaunchServicesClient
import LaunchServicesTesting
import Testing

/// A real `launchservicesd` reading desktop entries from private XDG folders: read at start
/// without holding the start up, read again when the folders change (no restart), a
/// `mimeapps.list` edit that moves a scheme logged with its file and line, nothing read when
/// turned off, and a folder it may not read logged and read again once it can be, while the
/// daemon serves.
@Suite("Desktop entries: read, watched and read again by a real daemon", .serialized)
struct DesktopEntriesWatchTests {
    /// A daemon over private XDG folders under `root`: `~` is `root/home`, the system's
    /// folders are `root/etc` and `root/usr/share`, and `prog` is on PATH.
    final class DesktopDaemon {
        let root: String
        let log: String
        private var process: ChildProcess?
        private let extra: [String: String]

        /// `prefix` (a program and its arguments, e.g. `setpriv …`) runs the daemon when given.
        /// No script is written for it: a file being written cannot be run while a process
        /// another test forks holds it open (ETXTBSY).
        init(config: String = "{}", environment extra: [String: String] = [:], setUp: (String) throws -> Void = { _ in },
             prefix: [String] = []) throws {
            self.extra = extra
            root = try TemporaryFolder(prefix: "ls-desktop-it").path
            log = root + "/daemon.log"
            do {
                try writeFile("#!/bin/sh\nexit 0\n", to: root + "/bin/prog")
                chmod(root + "/bin/prog", 0o755)
                try writeFile(config, to: root + "/config.json")
                try FileManager.default.createDirectory(atPath: root + "/apps", withIntermediateDirectories: true)
                try setUp(root)
                let daemon = DaemonHarness.binary("launchservicesd")
                let arguments = ["--socket", root + "/socket", "--apps", root + "/apps", "--state", root + "/state", "--config", root + "/config.json",
                                 "--log-level", "debug"]
                let started = try ChildProcess(prefix.first ?? daemon, Array(prefix.dropFirst()) + (prefix.isEmpty ? [] : [daemon]) + arguments,
                                               environment: environment, stdout: log)
                process = started
                try DaemonProcess.waitUntilServing(socket: root + "/socket", process: started, log: log)
            } catch {
                stop()
                throw error
            }
        }

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            for key in ["XDG_CURRENT_DESKTOP", "XDG_RUNTIME_DIR", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID"] { environment[key] = nil }
            environment.merge(["HOME": root + "/home", "XDG_CONFIG_HOME": root + "/home/.config", "XDG_CONFIG_DIRS": root + "/etc",
                               "XDG_DATA_HOME": root + "/home/.local/share", "XDG_DATA_DIRS": root + "/usr/share",
                               "XDG_STATE_HOME": root + "/state-home", "PATH": root + "/bin:/usr/bin:/bin",
                               "LAUNCHSERVICES_SOCKET": root + "/socket"]) { $1 }
            return environment.merging(extra) { $1 }
        }

        var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        var pid: Int32 { process?.pid ?? 0 }

        /// Waits (at most 20 s) until the log holds `text`. Asleep between looks, not
        /// blocking: the tests beside this one share a thread pool as wide as the machine has
        /// cores.
        /// The log is looked at once more after the deadline: a test task the shared pool
        /// did not run for longer than that (the suite's synchronous tests hold its threads)
        /// must not fail on a line the daemon wrote long before.
        func waitForLog(_ text: String) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while true {
                if output.contains(text) { return }
                guard ContinuousClock.now < deadline else { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw HarnessError("timed out after 20 s waiting for the daemon's log to hold \(text)\n\(output)")
        }

        /// Stops the daemon (SIGTERM, then SIGKILL) and waits for it; its folders stay.
        func stopDaemon() {
            process?.stop()
            process = nil
        }

        func stop() {
            stopDaemon()
            // A folder the test locked must be open again for the removal.
            _ = try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root + "/home/.local/share/applications")
            try? FileManager.default.removeItem(atPath: root)
        }

        deinit { stop() }
    }

    static func entry(_ scheme: String) -> String {
        "[Desktop Entry]\nType=Application\nName=x\nExec=prog %u\nMimeType=x-scheme-handler/\(scheme);\n"
    }

    @Test("entries appear after a change to the folders, without a restart, also in a folder made after the start")
    func entriesAppear() async throws {
        let d = try DesktopDaemon()
        defer { d.stop() }
        try await d.waitForLog("desktop entries read: 0 entries in 4 folders, 0 schemes handled")
        // ~/.local/share/applications did not exist: made now, with an entry.
        try writeFile(Self.entry("web"), to: d.root + "/home/.local/share/applications/web.desktop")
        try await d.waitForLog("desktop handler for 'web' is now web.desktop (was none): ~/.local/share/applications/web.desktop:5 MimeType")
        // A subfolder made later, and an entry in a system folder.
        try writeFile(Self.entry("irc"), to: d.root + "/home/.local/share/applications/chat/irc.desktop")
        try await d.waitForLog("desktop handler for 'irc' is now chat-irc.desktop (was none): ~/.local/share/applications/chat/irc.desktop:5 MimeType")
        try writeFile(Self.entry("gopher"), to: d.root + "/usr/share/applications/gopher.desktop")
        try await d.waitForLog("desktop handler for 'gopher' is now gopher.desktop (was none): \(d.root)/usr/share/applications/gopher.desktop:5 MimeType")
        // Removed: no handler any more.
        try FileManager.default.removeItem(atPath: d.root + "/home/.local/share/applications/chat")
        try await d.waitForLog("desktop handler for 'irc' is now none (was chat-irc.desktop)")
        #expect(isAlive(d.pid))
    }

    @Test("a mimeapps.list edit that moves a scheme is logged at notice, naming the file and line that did it")
    func mimeappsEdit() async throws {
        let d = try DesktopDaemon(environment: ["XDG_CURRENT_DESKTOP": "GNOME"], setUp: { root in
            try writeFile(Self.entry("mailto"), to: root + "/usr/share/applications/thunderbird.desktop")
            try writeFile(Self.entry("mailto"), to: root + "/usr/share/applications/org.example.Mail.desktop")
            try writeFile("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n", to: root + "/home/.config/mimeapps.list")
        })
        defer { d.stop() }
        try await d.waitForLog("desktop entries read: 2 entries in 4 folders, 1 schemes handled")
        // As an editor saves: a new file renamed over the old one.
        try "# mine\n[Default Applications]\nx-scheme-handler/mailto=org.example.Mail.desktop\n"
            .write(toFile: d.root + "/home/.config/mimeapps.list", atomically: true, encoding: .utf8)
        try await d.waitForLog("desktop handler for 'mailto' is now org.example.Mail.desktop (was thunderbird.desktop): ~/.config/mimeapps.list:3 [Default Applications]")
        let line = try #require(d.output.split(separator: "\n").first { $0.contains("desktop handler for 'mailto'") })
        #expect(line.contains(" notice "), "\(line)")
        // The desktop's own list (XDG_CURRENT_DESKTOP=GNOME) comes first.
        try writeFile("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n", to: d.root + "/home/.config/gnome-mimeapps.list")
        try await d.waitForLog("desktop handler for 'mailto' is now thunderbird.desktop (was org.example.Mail.desktop): ~/.config/gnome-mimeapps.list:2 [Default Applications]")
    }

    @Test("enabled false: nothing is read, at the start or after a change")
    func disabled() async throws {
        let d = try DesktopDaemon(config: #"{"desktopEntries": {"enabled": false}}"#, setUp: { root in
            try writeFile(Self.entry("mailto"), to: root + "/usr/share/applications/mail.desktop")
            try writeFile("not a desktop entry\n", to: root + "/usr/share/applications/broken.desktop")
        })
        defer { d.stop() }
        // Logged before the daemon serves, where a read would have begun.
        #expect(d.output.contains("desktop entries are not read (desktopEntries.enabled is false)"))
        try writeFile(Self.entry("irc"), to: d.root + "/usr/share/applications/irc.desktop")
        try writeFile("[Default Applications]\nx-scheme-handler/irc=irc.desktop\n", to: d.root + "/home/.config/mimeapps.list")
        d.stopDaemon()
        let output = d.output
        #expect(output.contains("stopped"))
        #expect(!output.contains("desktop entries read"), "\(output)")
        #expect(!output.contains("broken.desktop"), "the malformed entry would be noted by any read")
        #expect(!output.contains("desktop handler for"))
    }

    @Test("a start with a folder it may not read serves, logs the folder and why, and reads it once it can")
    func unreadableFolder() async throws {
        // Root reads any folder; without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH the daemon
        // is held to the folder's mode like any user.
        let d = try DesktopDaemon(setUp: { root in
            try writeFile(Self.entry("web"), to: root + "/home/.local/share/applications/web.desktop")
            try writeFile(Self.entry("gopher"), to: root + "/usr/share/applications/gopher.desktop")
            #expect(chmod(root + "/home/.local/share/applications", 0) == 0)
        }, prefix: ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search"])
        defer { d.stop() }
        let folder = d.root + "/home/.local/share/applications"
        try await d.waitForLog("desktop entries folder \(folder) could not be read (Permission denied): nothing in it counts until it can be read; read again in 1 s")
        try await d.waitForLog("desktop entries read: 1 entries in 4 folders, 1 schemes handled, 1 could not be read")
        // It serves meanwhile.
        let client = try LaunchServicesClient(socketPath: d.root + "/socket", program: "desktop-it")
        defer { client.close() }
        #expect(try client.query(.status, timeout: .seconds(10)).contains("\"appsRegistered\""))
        #expect(chmod(folder, 0o755) == 0)
        try await d.waitForLog("desktop handler for 'web' is now web.desktop (was none): ~/.local/share/applications/web.desktop:5 MimeType")
        try await d.waitForLog("desktop entries read in full again")
        #expect(isAlive(d.pid))
    }
}
