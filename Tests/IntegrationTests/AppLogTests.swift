import Foundation
import LaunchServicesProtocol
import Testing

/// Outside systemd, each launched app's stdout and stderr go to its own bounded log file
/// (`state/logs/ID.log`, rotated to `ID.log.1`), which `lsctl logs` prints.
@Suite("App logs")
struct AppLogTests {
    @Test("an app's stdout and stderr land in its log file, not in the daemon's output; lsctl logs prints them")
    func outputInLogFile() throws {
        let h = try DaemonHarness(apps: [.test("chatty", "--print=hello-from-chatty")])
        defer { h.stop() }
        let r = try h.lsopen("chatty:x")
        #expect(r.status == 0, "\(r.stderr)")
        try h.eventually("both lines reach the log") {
            let log = h.appLog("test.chatty")
            return log.contains("hello-from-chatty stdout 1\n") && log.contains("hello-from-chatty stderr 1\n")
        }
        #expect(!h.daemonOutput.contains("hello-from-chatty"), "app output stays out of the daemon's log")
        let status = try h.lsctl("status", "--json").decode(StatusReport.self)
        #expect(status.appLogs == h.appLogFolder)
        #expect(try h.lsctl("status").stdout.contains("  app logs:   \(h.appLogFolder)\n"))

        let logs = try h.lsctl("logs", "test.chatty")
        #expect(logs.status == 0, "\(logs.stderr)")
        #expect(logs.stdout.contains("hello-from-chatty stdout 1\n") && logs.stdout.contains("hello-from-chatty stderr 1\n"))
        let last = try h.lsctl("logs", "test.chatty", "-n", "1")
        #expect(last.stdout == "hello-from-chatty stderr 1\n", "\(last.stdout)")

        let unknown = try h.lsctl("logs", "test.nobody")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no app 'test.nobody' is registered"), "\(unknown.stderr)")
    }

    @Test("a desktop app's output goes to DESKTOP-ID.log, which lsctl logs prints by its desktop file ID")
    func desktopAppLog() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        try FileManager.default.createDirectory(atPath: h.dataHome + "/applications", withIntermediateDirectories: true)
        try Data("""
            [Desktop Entry]
            Type=Application
            Name=Log
            Exec=sh -c "echo desktop-out; echo desktop-err >&2" sh %u
            MimeType=x-scheme-handler/dlog;

            """.utf8).write(to: URL(fileURLWithPath: h.dataHome + "/applications/org.example.Log.desktop"))
        try h.eventually("the desktop entry is read and opened") { try h.lsopen("dlog:x").status == 0 }
        try h.eventually("both lines reach the log") {
            let logs = try h.lsctl("logs", "org.example.Log.desktop")
            return logs.status == 0 && logs.stdout.contains("desktop-out\n") && logs.stdout.contains("desktop-err\n")
        }
        let none = try h.lsctl("logs", "org.example.None.desktop")
        #expect(none.stderr.contains("has written nothing yet"), "\(none.stderr)")
    }

    @Test("lsctl logs: on a terminal, an app's control characters are escaped line by line; piped, the exact bytes; --json, the exact lines")
    func logsOnTerminal() throws {
        let h = try DaemonHarness(apps: [.test("chatty")])
        defer { h.stop() }
        // What an app may write: a window title, a screen clear, a carriage return over a line.
        let text = "plain line\n\u{1B}]0;retitled\u{07}\u{1B}[2Jcleared\rover\n"
        try FileManager.default.createDirectory(atPath: h.appLogFolder, withIntermediateDirectories: true)
        try text.write(toFile: h.appLogFolder + "/test.chatty.log", atomically: true, encoding: .utf8)

        let piped = try h.lsctl("logs", "test.chatty")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout == text, "piped: byte for byte")

        let terminal = try h.lsctlOnTerminal("logs", "test.chatty")
        #expect(terminal.status == 0, "\(terminal.stdout)")
        #expect(terminal.stdout == "plain line\r\n\\x1B]0;retitled\\x07\\x1B[2Jcleared\\rover\r\n", "\(terminal.stdout.debugDescription)")

        let json = try h.lsctl("logs", "test.chatty", "--json", "-n", "1")
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.json?["destination"] as? String == h.appLogFolder)
        #expect(json.json?["file"] as? String == h.appLogFolder + "/test.chatty.log")
        #expect(json.json?["lines"] as? [String] == ["\u{1B}]0;retitled\u{07}\u{1B}[2Jcleared\rover"], "\(json.stdout)")
        #expect(!json.stdout.unicodeScalars.contains("\u{1B}"), "JSON escapes it")
    }

    @Test("past appLogs.maximumBytes the log rotates to ID.log.1; neither file passes the limit")
    func rotation() throws {
        let h = try DaemonHarness(apps: [.test("noisy", "--print=line-of-noisy-output", "--print-repeat=200")],
                                  config: #"{"appLogs": {"maximumBytes": 1024}}"#)
        defer { h.stop() }
        #expect(try h.lsopen("noisy:x").status == 0)
        let log = h.appLogFolder + "/test.noisy.log"
        try h.eventually("the last line is logged") { h.appLog("test.noisy").hasSuffix("line-of-noisy-output stderr 200\n") }
        let fm = FileManager.default
        #expect(fm.fileExists(atPath: log + ".1"))
        for path in [log, log + ".1"] {
            let size = (try fm.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            #expect(size > 0 && size <= 1024, "\(path): \(size) bytes")
        }
        #expect(!h.appLog("test.noisy").contains("line-of-noisy-output stdout 1\n"), "the oldest lines are gone")
        let tail = try h.lsctl("logs", "test.noisy", "-n", "2")
        #expect(tail.stdout == "line-of-noisy-output stdout 200\nline-of-noisy-output stderr 200\n", "\(tail.stdout)")
    }

    @Test("the log pipe is closed when the app exits: no descriptor left in the daemon")
    func pipeClosedOnExit() throws {
        let h = try DaemonHarness(apps: [.test("brief", "--print=brief")])
        defer { h.stop() }
        let before = Self.pipes(of: h)
        #expect(try h.lsopen("brief:x").status == 0)
        let pid = try #require(try h.running().first { $0.id == "test.brief" }?.pid)
        #expect(Self.pipes(of: h) == before + 1, "one pipe per running app")
        kill(pid, SIGKILL)
        try h.eventually("the app's exit is noticed") { try h.running().isEmpty }
        try h.eventually("the pipe is closed") { Self.pipes(of: h) == before }
        #expect(h.appLog("test.brief").contains("brief stdout 1\n"))
    }

    @Test("an app that prints and exits at once, three times: each caller hears its exit status in the launch phase, every line reaches its log, and no pipe is left")
    func exitBeforeWatched() throws {
        let h = try DaemonHarness(apps: [.test("hasty", "--print=hasty", "--launch=exit")])
        defer { h.stop() }
        let before = Self.pipes(of: h)
        for _ in 0..<3 {
            let r = try h.lsopen("--json", "hasty:x")
            #expect(r.status != 0)
            #expect(r.errorPhase == "launch", "\(r.stdout)")
            #expect(r.errorMessage?.contains("status 3") == true, "\(r.errorMessage ?? r.stderr)")
        }
        try h.eventually("every launch's lines reach the log") {
            h.appLog("test.hasty").components(separatedBy: "hasty stdout 1\n").count == 4
        }
        try h.eventually("no pipe is left") { Self.pipes(of: h) == before }
        #expect(try h.running().isEmpty)
    }

    @Test("an app started by hand keeps its own stdout")
    func byHandKeepsStdout() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let bundle = try h.bundleOutsideAppsFolders("handy")
        let app = try h.startByHand(bundle: bundle, arguments: ["--print=by-hand"])
        defer { app.stop() }
        try h.eventually("the app checks in") { try h.state(of: "test.handy") == "background" }
        try h.eventually("its line is in its own stdout") { h.byHandOutput.contains("by-hand stdout 1\n") }
        #expect(!FileManager.default.fileExists(atPath: h.appLogFolder + "/test.handy.log"))
    }

    /// How many pipes the daemon holds open.
    static func pipes(of h: DaemonHarness) -> Int {
        let folder = "/proc/\(h.daemonPID)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) ?? "").hasPrefix("pipe:")
        }.count
    }
}
