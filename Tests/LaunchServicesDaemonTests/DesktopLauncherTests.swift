import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// `DesktopLauncher` with real processes: handler programs (shell scripts the test writes)
/// record their arguments and environment; each outcome, one process per URL or one for
/// all, arguments that carry shell syntax arriving untouched and unexecuted, terminals,
/// the stderr tail, the log file, and the forwarder that outlives its reader.
@Suite("Desktop apps: launching and outcomes", .serialized)
struct DesktopLauncherTests {
    @Test("%u with two URLs starts two processes, each with its URL; the environment is the user's, not the daemon's")
    func onePerURL() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("mail", "exec sleep 600")
        let line = try ExecLine(parsing: "mail --compose %u")
        let commands = try line.commands(for: ["mailto:a@example.com", "mailto:b@example.com"])
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "org.example.Mail.desktop", commands: commands,
                                                                     entryPath: "/usr/share/applications/org.example.Mail.desktop"))
        #expect(outcomes.map(\.kind) == [.running, .running], "\(outcomes)")
        let pids = outcomes.compactMap(\.pid)
        defer { fixture.kill(pids) }
        #expect(Set(pids).count == 2)
        for (pid, url) in zip(pids, ["mailto:a@example.com", "mailto:b@example.com"]) {
            #expect(try fixture.arguments(of: pid) == ["--compose", url])
            let environment = try fixture.environment(of: pid)
            #expect(environment["GIO_LAUNCHED_DESKTOP_FILE"] == "/usr/share/applications/org.example.Mail.desktop")
            #expect(environment["GIO_LAUNCHED_DESKTOP_FILE_PID"] == "\(pid)")
            #expect(environment["NOTIFY_SOCKET"] == nil && environment["LISTEN_FDS"] == nil)
            #expect(environment["RECORD_DIR"] == fixture.records)
        }
        #expect(try await fixture.running().map(\.pid).sorted() == pids.sorted())
    }

    @Test("%U starts one process with every URL")
    func oneForAll() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("mail", "exit 0")
        let commands = try ExecLine(parsing: "mail %U").commands(for: ["mailto:a@example.com", "mailto:b@example.com"])
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "mail.desktop", commands: commands), grace: .seconds(60))
        #expect(outcomes.map(\.kind) == [.forwarded])
        let pid = try #require(outcomes.first?.pid)
        #expect(try fixture.arguments(of: pid) == ["mailto:a@example.com", "mailto:b@example.com"])
        #expect(fixture.recordedPIDs().count == 1)
    }

    @Test("a URL with spaces, quotes, ;, $(…), backticks and # arrives as one argument, byte for byte, and nothing in it runs")
    func injectionProof() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("viewer", "exit 0")
        let pwned = fixture.root + "/pwned"
        let url = "x-test://host/a b?q=\"double\" 'single';rm -rf nothing $(touch \(pwned)-1) `touch \(pwned)-2` #frag | & > \(pwned)-3 \\ end"
        let commands = try ExecLine(parsing: "viewer --url=%u %u").commands(for: [url])
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "viewer.desktop", commands: commands), grace: .seconds(60))
        #expect(outcomes.map(\.kind) == [.forwarded])
        let pid = try #require(outcomes.first?.pid)
        #expect(try fixture.arguments(of: pid) == ["--url=" + url, url])
        for suffix in ["-1", "-2", "-3"] {
            #expect(!FileManager.default.fileExists(atPath: pwned + suffix), "something in the URL ran: \(pwned + suffix)")
        }
    }

    @Test("running: alive when the grace ends; forwarded: exited 0 within it")
    func runningAndForwarded() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("stays", "exec sleep 600")
        try fixture.handler("hands-over", "exit 0")
        let running = try await fixture.launch(DesktopLaunchRequest(desktopID: "stays.desktop", commands: [["stays"]]), grace: .milliseconds(300))
        defer { fixture.kill(running.compactMap(\.pid)) }
        #expect(running.map(\.kind) == [.running])
        #expect(running.first?.exitStatus == nil)
        let forwarded = try await fixture.launch(DesktopLaunchRequest(desktopID: "hands-over.desktop", commands: [["hands-over"]]), grace: .seconds(60))
        #expect(forwarded.map(\.kind) == [.forwarded])
        #expect(forwarded.first?.exitStatus == .exited(0))
        #expect(forwarded.first?.kind.isSuccess == true)
    }

    @Test("forwarded is answered at once, even when a process the app left behind holds its stderr open")
    func forwardedDoesNotWaitForStderr() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("hands-over", """
            sleep 600 &
            echo $! > "$RECORD_DIR/left-behind"
            echo "handed over" >&2
            exit 0
            """)
        func leftBehind() -> Int32 {
            Int32((try? String(contentsOfFile: fixture.records + "/left-behind", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        }
        defer { if leftBehind() > 0 { fixture.kill([leftBehind()]) } }
        // Were the answer to wait for the end of stderr, it would wait the whole settle
        // (longer than the launch's own 60 s bound) and this launch would throw.
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "hands-over.desktop", commands: [["hands-over"]]),
                                                grace: .seconds(60), settle: .seconds(600))
        #expect(leftBehind() > 0)
        #expect(outcomes == [DesktopLaunchOutcome(kind: .forwarded, pid: outcomes.first?.pid, exitStatus: .exited(0))])
    }

    @Test("exited N: the status and the last lines of stderr, bounded; a signal is named")
    func exitedWithStderr() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("fails", """
            i=1
            while [ $i -le 30 ]; do echo "warning $i" >&2; i=$((i+1)); done
            echo "to stdout"
            echo "fails: cannot open display" >&2
            exit 3
            """)
        try fixture.handler("crashes", "kill -USR1 $$")
        let failed = try await fixture.launch(DesktopLaunchRequest(desktopID: "fails.desktop", commands: [["fails"]]), grace: .seconds(60))
        let outcome = try #require(failed.first)
        #expect(outcome.kind == .exited)
        #expect(outcome.exitStatus == .exited(3))
        #expect(outcome.stderrTail == (22...30).map { "warning \($0)" } + ["fails: cannot open display"])
        #expect(!outcome.kind.isSuccess)
        let crashed = try await fixture.launch(DesktopLaunchRequest(desktopID: "crashes.desktop", commands: [["crashes"]]), grace: .seconds(60))
        #expect(crashed.first?.kind == .exited)
        #expect(crashed.first?.exitStatus == .signaled(SIGUSR1))
    }

    @Test("failed to start: the program not on PATH, not executable, a bad format, a missing working folder, each named with path and errno")
    func failedToStart() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("ok", "exit 0")
        try writeFile("#!/bin/sh\nexit 0\n", to: fixture.bin + "/not-executable")
        try writeFile("this is not a program\n", to: fixture.bin + "/garbage")
        chmod(fixture.bin + "/garbage", 0o755)
        let missing = try await fixture.launch(DesktopLaunchRequest(desktopID: "a.desktop", commands: [["no-such-program", "x"]]))
        #expect(missing == [.failed(.programNotFound(program: "no-such-program"))])
        let denied = try await fixture.launch(DesktopLaunchRequest(desktopID: "a.desktop", commands: [[fixture.bin + "/not-executable"]]))
        #expect(denied == [.failed(.system(stage: "exec", path: fixture.bin + "/not-executable", errno: EACCES, reason: String(cString: strerror(EACCES))))])
        let garbage = try await fixture.launch(DesktopLaunchRequest(desktopID: "a.desktop", commands: [[fixture.bin + "/garbage"]]))
        #expect(garbage == [.failed(.system(stage: "exec", path: fixture.bin + "/garbage", errno: ENOEXEC, reason: String(cString: strerror(ENOEXEC))))])
        let nowhere = try await fixture.launch(DesktopLaunchRequest(desktopID: "a.desktop", commands: [["ok"]], workingDirectory: fixture.root + "/missing"), grace: .seconds(60))
        #expect(nowhere == [.failed(.system(stage: "chdir", path: fixture.root + "/missing", errno: ENOENT, reason: String(cString: strerror(ENOENT))))])
        #expect("\(nowhere[0])".contains("failed to start: chdir"))
        #expect(fixture.recordedPIDs().isEmpty)
        // A working folder that exists is used.
        try fixture.handler("where", "pwd > \"$RECORD_DIR/cwd\"")
        let here = try await fixture.launch(DesktopLaunchRequest(desktopID: "a.desktop", commands: [["where"]], workingDirectory: fixture.records), grace: .seconds(60))
        #expect(here.map(\.kind) == [.forwarded])
        #expect(try String(contentsOfFile: fixture.records + "/cwd", encoding: .utf8) == fixture.records + "\n")
    }

    @Test("Terminal=true runs the command in $TERMINAL, else x-terminal-emulator on PATH, as TERMINAL -e ARGV")
    func terminal() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("mutt", "exit 0")
        // A fake terminal: records its own argv, then runs what follows -e.
        let fakeTerminal = "[ \"$1\" = -e ] || exit 64\nshift\nexec \"$@\""
        try fixture.handler("x-terminal-emulator", fakeTerminal)
        let commands = try ExecLine(parsing: "mutt %u").commands(for: ["mailto:x@example.com"])
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "mutt.desktop", commands: commands, terminal: true), grace: .seconds(60))
        #expect(outcomes.map(\.kind) == [.forwarded])
        let recorded = try fixture.recordedPIDs().map { try fixture.arguments(of: $0) }
        // One process: the terminal execs the handler, whose record replaces its own.
        #expect(recorded == [["mailto:x@example.com"]])
        // The command as the Exec line wrote it; the terminal finds it on the same PATH.
        #expect(try fixture.record(of: "x-terminal-emulator") == ["-e", "mutt", "mailto:x@example.com"])

        // A command whose program is missing is refused before any terminal opens.
        let missing = try await fixture.launch(DesktopLaunchRequest(desktopID: "mutt.desktop", commands: [["no-such-mailer"]], terminal: true))
        #expect(missing == [.failed(.programNotFound(program: "no-such-mailer"))])

        // $TERMINAL wins when set.
        try fixture.handler("myterm", fakeTerminal)
        let chosen = try await fixture.launch(DesktopLaunchRequest(desktopID: "mutt.desktop", commands: commands, terminal: true), grace: .seconds(60), environment: ["TERMINAL": "myterm"])
        #expect(chosen.map(\.kind) == [.forwarded])
        #expect(try fixture.record(of: "myterm") == ["-e", "mutt", "mailto:x@example.com"])
    }

    @Test("Terminal=true with no terminal emulator is a named error; a TERMINAL that is not found is named too")
    func noTerminal() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("mutt", "exit 0")
        let request = DesktopLaunchRequest(desktopID: "mutt.desktop", commands: [["mutt"]], terminal: true)
        let none = try await fixture.launch(request)
        #expect(none == [.failed(TerminalCommand.notFound(terminalVariable: nil))])
        #expect("\(none[0])".contains("x-terminal-emulator is not on PATH"))
        let wrong = try await fixture.launch(request, environment: ["TERMINAL": "no-such-terminal"])
        #expect(wrong == [.failed(TerminalCommand.notFound(terminalVariable: "no-such-terminal"))])
        #expect(fixture.recordedPIDs().isEmpty)
    }

    @Test("with log files: stdout and stderr reach DESKTOP-ID.log, and the app writes stderr unharmed after the daemon stopped reading it")
    func logFileAndForwarder() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        let logs = fixture.root + "/logs"
        try fixture.handler("chatty", """
            echo "out before"
            echo "err before" >&2
            n=0
            while [ ! -e "$RECORD_DIR/go" ]; do sleep 0.05; n=$((n+1)); [ $n -lt 1200 ] || exit 9; done
            echo "err after" >&2
            echo "out after"
            touch "$RECORD_DIR/done"
            exec sleep 600
            """)
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "org.example.Chatty.desktop", commands: [["chatty"]]),
                                                grace: .milliseconds(300), output: .files(folder: logs, maximumBytes: 1 << 20))
        let pid = try #require(outcomes.first?.pid)
        defer { fixture.kill([pid]) }
        #expect(outcomes.map(\.kind) == [.running])
        // The outcome is given: the daemon's copy of stderr is closed. The app writes on.
        try writeFile("", to: fixture.records + "/go")
        try waitFor("the app to write after the outcome") { FileManager.default.fileExists(atPath: fixture.records + "/done") }
        #expect(isAlive(pid))
        let log = logs + "/org.example.Chatty.desktop.log"
        try waitFor("every line in the log file") {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return ["out before", "err before", "err after", "out after"].allSatisfy(text.contains)
        }
    }

    @Test("the launcher's shutdown answers a launch still in its grace with what it knows, and the app runs on")
    func shutdownAnswers() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("stays", "exec sleep 600")
        let launcher = try await fixture.makeLauncher(grace: .seconds(600))
        let answer = fixture.start(DesktopLaunchRequest(desktopID: "stays.desktop", commands: [["stays"]]), on: launcher)
        var pid: Int32?
        for _ in 0..<600 where pid == nil {
            pid = try await fixture.running().first?.pid
            if pid == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let started = try #require(pid, "the app never started")
        defer { fixture.kill([started]) }
        try await launcher.eventLoop.submit { launcher.value.shutdown() }.get()
        let outcomes = try await answer.get()
        #expect(outcomes == [.running(pid: started)])
        #expect(isAlive(started))
        #expect(try await fixture.running().isEmpty)
        // After the shutdown nothing more starts.
        let refused = try await fixture.launch(DesktopLaunchRequest(desktopID: "stays.desktop", commands: [["stays"]]), on: launcher)
        #expect(refused == [.failed(.stopping)])
    }

    @Test("no more than maximumRunning desktop processes are watched; beyond, a named refusal")
    func runningLimit() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("stays", "exec sleep 600")
        var settings = DesktopLaunchSettings()
        settings.maximumRunning = 1
        let launcher = try await fixture.makeLauncher(grace: .milliseconds(200), settings: settings)
        let first = try await fixture.launch(DesktopLaunchRequest(desktopID: "stays.desktop", commands: [["stays"]]), on: launcher)
        defer { fixture.kill(first.compactMap(\.pid)) }
        #expect(first.map(\.kind) == [.running])
        let second = try await fixture.launch(DesktopLaunchRequest(desktopID: "stays.desktop", commands: [["stays"]]), on: launcher)
        #expect(second == [.failed(.tooManyRunning(limit: 1))])
    }

    @Test("a desktop app that exits after the grace is no longer listed, and its exit is logged with its status")
    func exitAfterGrace() async throws {
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("stays", "exec sleep 600")
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "stays.desktop", commands: [["stays"]]), grace: .milliseconds(200))
        let pid = try #require(outcomes.first?.pid)
        #expect(try await fixture.running().map(\.pid) == [pid])
        kill(pid, SIGTERM)
        try await fixture.waitUntilNotRunning(pid)
        try waitFor("the exit in the log") {
            fixture.logLines.withLockedValue { $0 }.contains { $0.contains("desktop app exited: was killed by signal 15 (SIGTERM)") }
        }
    }
}
