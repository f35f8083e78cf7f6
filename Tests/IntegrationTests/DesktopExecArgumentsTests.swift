import Foundation
import LaunchServicesTesting
import Testing

/// What a desktop app's process is given, as it recorded it (`HandlerPrograms`): `%u` one
/// process per URL, `%U` the URL, the other field codes, a URL full of shell syntax as one
/// argument byte for byte (and no shell ever running it), and `Terminal=true` run in the
/// terminal `$TERMINAL` names, or a named failure when there is none.
///
/// Every handler here exits 0 at once and the grace is long: each open is answered
/// `forwarded` at the handler's exit.
@Suite("Desktop apps: the arguments of the process, never through a shell", .serialized)
struct DesktopExecArgumentsTests {
    @Test("%u: one process per URL; two opens start two processes, each with exactly its URL")
    func onePerURL() throws {
        let s = try DesktopSession { s in try s.entry("single.desktop", exec: "itrecord exit0 --one %u", schemes: ["x-one"]) }
        defer { s.stop() }
        let first = try s.lsopen("--json", "x-one:first")
        let second = try s.lsopen("--json", "x-one://host/second?x=1#f")
        for run in [first, second] {
            #expect(run.status == 0, "\(run.said)")
            #expect(run.string("outcome") == "forwarded", "\(run.said)")
        }
        let pids = [first, second].compactMap { $0.int("pid").map(Int32.init) }
        #expect(pids.count == 2 && pids[0] != pids[1], "\(pids)")
        let records = try s.waitForHandlers(2)
        #expect(records.count == 2, "\(records)")
        #expect(Set(records.map(\.pid)) == Set(pids))
        for (pid, url) in zip(pids, ["x-one:first", "x-one://host/second?x=1#f"]) {
            #expect(records.first { $0.pid == pid }?.arguments == ["exit0", "--one", url], "\(records)")
        }
    }

    @Test("%U: the URL in one process")
    func urlList() throws {
        let s = try DesktopSession { s in try s.entry("list.desktop", exec: "itrecord exit0 %U --last", schemes: ["x-list"]) }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-list:a?b=c")
        #expect(run.status == 0, "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "x-list:a?b=c", "--last"], "\(s.handlerRecords)")
        #expect(s.handlerRecords.count == 1)
    }

    @Test("%%, %c, %k and a quoted argument holding spaces, ';' and '#' arrive as written; a deprecated code is dropped")
    func otherFieldCodes() throws {
        var entryPath = ""
        let s = try DesktopSession { s in
            entryPath = try s.entry("fields.desktop", exec: #"itrecord exit0 "two words; #not a comment" 100%% %c %k %d %u"#, schemes: ["x-fields"],
                                    name: "Field Codes")
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-fields:x")
        #expect(run.status == 0, "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "two words; #not a comment", "100%", "Field Codes", entryPath, "x-fields:x"], "\(s.handlerRecords)")
    }

    @Test("%i: --icon and the entry's Icon value, as two arguments")
    func iconFieldCode() throws {
        let s = try DesktopSession { s in
            try s.entry("icon.desktop", exec: "itrecord exit0 %i %u", schemes: ["x-icon"], extra: ["Icon=it-icon"])
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-icon:x")
        #expect(run.status == 0, "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", "--icon", "it-icon", "x-icon:x"], "\(s.handlerRecords)")
    }

    /// A URL the URL rules accept (no space: `%20`) holding what a shell would act on: each
    /// would create a file in `root` if any shell read it.
    static func hostileURL(root: String) -> String {
        let r = root
        return "x-inject://host/a%20b?q=\"double\"&s='single';touch${IFS}\(r)/pwned-semicolon&c=$(touch${IFS}\(r)/pwned-dollar)"
            + "&d=`touch${IFS}\(r)/pwned-backtick`|touch${IFS}\(r)/pwned-pipe&&touch${IFS}\(r)/pwned-and>\(r)/pwned-redirect"
            + "&e=\\back\\slash&f=caf\u{e9}%25%00#frag;touch${IFS}\(r)/pwned-fragment"
    }

    @Test("quotes, ';', $(…), backticks, '#', '&', '|' and '>' in a URL arrive byte for byte as one argument, and no shell runs them")
    func injectionProof() throws {
        let s = try DesktopSession { s in
            try s.entry("inject.desktop", exec: "itrecord exit0 %u", schemes: ["x-inject"])
            try s.entry("inject-list.desktop", exec: "itrecord exit0 %U", schemes: ["x-inject-list"])
        }
        defer { s.stop() }
        let url = Self.hostileURL(root: s.root)
        let single = try s.lsopen("--json", url)
        #expect(single.status == 0, "\(single.said)")
        #expect(single.string("url") == url)
        let pid = try #require(single.int("pid").map(Int32.init), "\(single.said)")
        #expect(try s.handler(pid: pid).arguments == ["exit0", url], "\(s.handlerRecords)")

        let listURL = "x-inject-list" + String(url.dropFirst("x-inject".count))
        let list = try s.lsopen(listURL)
        #expect(list.status == 0, "\(list.said)")
        let records = try s.waitForHandlers(2)
        #expect(records.map(\.arguments).contains(["exit0", listURL]), "\(records)")

        let made = (try FileManager.default.contentsOfDirectory(atPath: s.root)).filter { $0.hasPrefix("pwned") }
        #expect(made.isEmpty, "a shell ran part of the URL: \(made)")
    }

    @Test("Terminal=true: the process is the terminal $TERMINAL names, given -e and the command; the command then gets the URL")
    func terminal() throws {
        let s = try DesktopSession(environment: ["TERMINAL": "itterm"]) { s in
            try s.entry("console.desktop", exec: "itrecord exit0 %u", schemes: ["x-console"], extra: ["Terminal=true"])
        }
        defer { s.stop() }
        let url = "x-console:top?a=b;c"
        let run = try s.lsopen("--json", url)
        #expect(run.status == 0, "\(run.said)")
        #expect(run.string("outcome") == "forwarded", "\(run.said)")
        let pid = try #require(run.int("pid").map(Int32.init), "\(run.said)")
        // The terminal became the command (exec): one pid, two records.
        #expect(try s.handler(pid: pid).arguments == ["exit0", url], "\(s.handlerRecords)")
        let terminals = s.terminalRecords
        #expect(terminals.count == 1, "\(terminals)")
        #expect(terminals.first?.pid == pid)
        let given = terminals.first?.arguments ?? []
        #expect(given.first == "-e" && given.dropFirst(2) == ["exit0", url], "\(terminals)")
        #expect(["itrecord", s.bin + "/itrecord"].contains(given.dropFirst().first ?? ""), "the command's program, as written or found on PATH: \(terminals)")
    }

    @Test("Terminal=true with no terminal to run it: failed to start, naming TERMINAL; nothing runs")
    func noTerminal() throws {
        let s = try DesktopSession(environment: ["TERMINAL": "it-no-such-terminal"]) { s in
            try s.entry("console.desktop", exec: "itrecord exit0 %u", schemes: ["x-console"], extra: ["Terminal=true"])
        }
        defer { s.stop() }
        let run = try s.lsopen("--json", "x-console:top")
        #expect(run.status == 68, "\(run.said)")
        #expect(run.bool("opened") == false)
        #expect(run.string("outcome") == "failedToStart", "\(run.said)")
        #expect(run.errorCode == "launchFailed", "\(run.said)")
        let message = run.errorMessage ?? ""
        #expect(message.contains("TERMINAL") && message.contains("it-no-such-terminal"), "\(message)")
        #expect(s.handlerRecords.isEmpty && s.terminalRecords.isEmpty)
    }
}
