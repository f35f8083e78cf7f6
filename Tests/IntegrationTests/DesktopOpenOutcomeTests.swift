import Foundation
import LaunchServicesTesting
import Testing

/// Each outcome of opening a URL in a desktop app, through a real daemon and the real
/// `lsopen`, `--json` and text: `running` (alive after the grace), `forwarded` (exited 0
/// within it), `exited` (a status or a signal, with its stderr lines; exit 68), `failed to
/// start` (the path and errno; exit 68). The handlers are real programs (`HandlerPrograms`)
/// in private XDG folders (`DesktopSession`).
///
/// Where a handler must be seen running the grace is short and the handler never exits by
/// itself; where it must be seen exiting within the grace the grace is long and it exits at
/// once (the answer comes at its exit). So no outcome depends on how fast the machine is.
@Suite("Desktop apps: each outcome of an open, as lsopen reports it", .serialized)
struct DesktopOpenOutcomeTests {
    static let browser = "org.example.Browser.desktop"

    static func session(grace: Double, exec: String) throws -> DesktopSession {
        try DesktopSession(graceSeconds: grace) { s in
            try s.entry(browser, exec: exec, schemes: ["x-web"])
        }
    }

    /// The pid in `(pid N` or `pid N ` of a line lsopen printed.
    static func pid(in text: String) -> Int32? {
        guard let range = text.range(of: "pid ") else { return nil }
        return Int32(text[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("running: the handler is alive after the grace; --json has kind, desktop ID, outcome and its pid; the text says so; exit 0")
    func running() throws {
        let s = try Self.session(grace: 0.3, exec: "itrecord sleep %u")
        defer { s.stop() }
        let json = try s.lsopen("--json", "x-web:one")
        #expect(json.status == 0, "\(json.said)")
        #expect(json.bool("opened") == true)
        #expect(json.string("kind") == "desktop")
        #expect(json.string("app") == Self.browser)
        #expect(json.string("desktopID") == Self.browser)
        #expect(json.string("outcome") == "running")
        #expect(json.json?["error"] == nil)
        let pid = try #require(json.int("pid").map(Int32.init), "\(json.said)")
        s.track(pid)
        #expect(isAlive(pid), "running, and still alive")
        #expect(try s.handler(pid: pid).arguments == ["sleep", "x-web:one"], "\(s.handlerRecords)")

        let text = try s.lsopen("x-web:two")
        #expect(text.status == 0, "\(text.said)")
        let line = text.stdout.trimmingCharacters(in: .newlines)
        #expect(line.hasPrefix("started \(Self.browser) for x-web:two: still running after the grace (pid "), "\(text.said)")
        #expect(line.contains("; total ") && line.contains(" ms, wait ") && line.hasSuffix(" ms)"), "\(line)")
        #expect(text.stderr.isEmpty, "\(text.said)")
        let second = try #require(Self.pid(in: line), "\(line)")
        s.track(second)
        #expect(second != pid)
        #expect(isAlive(second))
        #expect(try s.handler(pid: second).arguments == ["sleep", "x-web:two"], "\(s.handlerRecords)")
    }

    @Test("forwarded: the handler exits 0 within the grace; --json has its pid and status 0; the text says it handed the URL on; exit 0")
    func forwarded() throws {
        let s = try Self.session(grace: 30, exec: "itrecord exit0 %u")
        defer { s.stop() }
        let json = try s.lsopen("--json", "x-web:one")
        #expect(json.status == 0, "\(json.said)")
        #expect(json.bool("opened") == true)
        #expect(json.string("kind") == "desktop")
        #expect(json.string("app") == Self.browser)
        #expect(json.string("desktopID") == Self.browser)
        #expect(json.string("outcome") == "forwarded")
        #expect(json.int("exitStatus") == 0)
        #expect(json.json?["signal"] == nil)
        let pid = try #require(json.int("pid").map(Int32.init), "\(json.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "x-web:one"], "\(s.handlerRecords)")
        #expect(!isAlive(pid))

        let text = try s.lsopen("x-web:two")
        #expect(text.status == 0, "\(text.said)")
        let line = text.stdout.trimmingCharacters(in: .newlines)
        #expect(line.hasPrefix("handed x-web:two to \(Self.browser): pid "), "\(text.said)")
        #expect(line.contains(" exited 0 within the grace, as an app does when it passes the URL to its running instance (total "), "\(line)")
        let second = try #require(Self.pid(in: line), "\(line)")
        #expect(try s.handler(pid: second).arguments == ["exit0", "x-web:two"], "\(s.handlerRecords)")
    }

    @Test("exited 3 with stderr lines: not opened; --json has crashed, the status, the pid and the lines; the text prints them; exit 68")
    func exitedWithStatus() throws {
        let s = try Self.session(grace: 30, exec: "itrecord fail %u")
        defer { s.stop() }
        let json = try s.lsopen("--json", "x-web:one")
        #expect(json.status == 68, "\(json.said)")
        #expect(json.bool("opened") == false)
        #expect(json.string("kind") == "desktop")
        #expect(json.string("app") == Self.browser)
        #expect(json.string("desktopID") == Self.browser)
        #expect(json.string("outcome") == "exited")
        #expect(json.int("exitStatus") == Int(HandlerPrograms.failStatus))
        #expect(json.json?["signal"] == nil)
        #expect(json.json?["stderr"] as? [String] == HandlerPrograms.failLines, "\(json.said)")
        #expect(json.errorCode == "crashed", "\(json.said)")
        let pid = try #require(json.int("pid").map(Int32.init), "\(json.said)")
        #expect(try s.handler(pid: pid).arguments == ["fail", "x-web:one"], "\(s.handlerRecords)")
        let message = try #require(json.errorMessage)
        for part in [Self.browser, "\(HandlerPrograms.failStatus)", "\(pid)"] + HandlerPrograms.failLines {
            #expect(message.contains(part), "the message lacks \(part): \(message)")
        }

        let text = try s.lsopen("x-web:two")
        #expect(text.status == 68, "\(text.said)")
        #expect(text.stdout.isEmpty, "\(text.said)")
        #expect(text.stderr.hasPrefix("lsopen: "), "\(text.said)")
        for part in [Self.browser, "\(HandlerPrograms.failStatus)"] + HandlerPrograms.failLines {
            #expect(text.stderr.contains(part), "lsopen's stderr lacks \(part): \(text.stderr)")
        }
        #expect(!text.stderr.contains("opened"), "\(text.said)")
    }

    @Test("exited by a signal: --json has the signal and no exit status; exit 68")
    func exitedBySignal() throws {
        let s = try Self.session(grace: 30, exec: "itrecord kill %u")
        defer { s.stop() }
        let json = try s.lsopen("--json", "x-web:one")
        #expect(json.status == 68, "\(json.said)")
        #expect(json.bool("opened") == false)
        #expect(json.string("outcome") == "exited")
        #expect(json.int("signal") == Int(SIGKILL), "\(json.said)")
        #expect(json.json?["exitStatus"] == nil, "\(json.said)")
        #expect(json.errorCode == "crashed")
        let pid = try #require(json.int("pid").map(Int32.init), "\(json.said)")
        #expect(try s.handler(pid: pid).arguments == ["kill", "x-web:one"], "\(s.handlerRecords)")
    }

    @Test("failed to start: a program the kernel cannot run (format, permission, missing interpreter) or a missing working folder names the path and errno; exit 68, never opened")
    func failedToStart() throws {
        let s = try DesktopSession(graceSeconds: 30) { s in
            // Executable files, so the entries are handlers (their programs are installed).
            try writeFile("this is not a program\n", to: s.bin + "/itgarbage")
            try writeFile("#!/nonexistent/interpreter\n", to: s.bin + "/itorphan")
            try writeFile("#!/bin/sh\nexit 0\n", to: s.root + "/opt/itplain")
            for path in [s.bin + "/itgarbage", s.bin + "/itorphan", s.root + "/opt/itplain"] { #expect(chmod(path, 0o755) == 0) }
            try s.entry("garbage.desktop", exec: "itgarbage %u", schemes: ["x-garbage"])
            try s.entry("orphan.desktop", exec: "itorphan %u", schemes: ["x-orphan"])
            try s.entry("plain.desktop", exec: s.root + "/opt/itplain %u", schemes: ["x-plain"])
            try s.entry("nodir.desktop", exec: "itrecord exit0 %u", schemes: ["x-nodir"], extra: ["Path=\(s.root)/no-such-folder"])
        }
        defer { s.stop() }
        try s.waitForLog("desktop entries read: 4 entries")
        // No longer executable after the read (PATH and programs are not watched): the
        // entry is still the handler, and the kernel refuses to run it.
        #expect(chmod(s.root + "/opt/itplain", 0o644) == 0)

        for (scheme, path, errno) in [("x-garbage", s.bin + "/itgarbage", ENOEXEC), ("x-orphan", s.bin + "/itorphan", ENOENT),
                                      ("x-plain", s.root + "/opt/itplain", EACCES), ("x-nodir", s.root + "/no-such-folder", ENOENT)] {
            let json = try s.lsopen("--json", scheme + ":one")
            #expect(json.status == 68, "\(scheme): \(json.said)")
            #expect(json.bool("opened") == false, "\(scheme)")
            #expect(json.string("kind") == "desktop", "\(scheme)")
            #expect(json.string("outcome") == "failedToStart", "\(scheme): \(json.said)")
            #expect(json.errorCode == "launchFailed", "\(scheme): \(json.said)")
            let message = json.errorMessage ?? ""
            #expect(message.contains(path), "\(scheme): the message does not name \(path): \(message)")
            #expect(message.contains("errno \(errno)"), "\(scheme): the message does not give errno \(errno): \(message)")
            #expect(message.contains(String(cString: strerror(errno))), "\(scheme): \(message)")
        }
        let text = try s.lsopen("x-orphan:two")
        #expect(text.status == 68, "\(text.said)")
        #expect(text.stdout.isEmpty, "\(text.said)")
        #expect(text.stderr.hasPrefix("lsopen: ") && text.stderr.contains(s.bin + "/itorphan") && text.stderr.contains("errno \(ENOENT)"), "\(text.said)")
        #expect(s.handlerRecords.isEmpty, "nothing ran: \(s.handlerRecords)")
    }

    @Test("failed to start: an Exec line that cannot be used safely (a reserved character, a field code inside quotes as in sh -c, a URL for a files-only app) is named; nothing runs")
    func unusableExecLine() throws {
        let s = try DesktopSession(graceSeconds: 30) { s in
            try s.entry("reserved.desktop", exec: "itrecord exit0 a;b %u", schemes: ["x-reserved"])
            try s.entry("shell.desktop", exec: #"sh -c "itrecord exit0 %u""#, schemes: ["x-shell"])
            try s.entry("files.desktop", exec: "itrecord exit0 %f", schemes: ["x-files"])
        }
        defer { s.stop() }
        for (scheme, words) in [("x-reserved", "outside quotes"), ("x-shell", "inside a quoted argument"), ("x-files", "local files")] {
            let run = try s.lsopen("--json", scheme + ":$(touch${IFS}\(s.root)/pwned)")
            #expect(run.status == 68, "\(scheme): \(run.said)")
            #expect(run.string("outcome") == "failedToStart", "\(scheme): \(run.said)")
            #expect(run.errorCode == "launchFailed", "\(scheme): \(run.said)")
            #expect((run.errorMessage ?? "").contains(words), "\(scheme): \(run.said)")
        }
        #expect(s.handlerRecords.isEmpty, "\(s.handlerRecords)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/pwned"), "a shell ran the URL")
    }
}
