import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesDaemon
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// `--version`, the man pages, the exit statuses and the options' places of the three tools, run as built.
@Suite("command-line conventions")
struct CommandLineConventionTests {
    static let tools = ["launchservicesd", "lsopen", "lsctl"]
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test("launchservicesd, lsopen and lsctl --version print the one version")
    func versions() throws {
        try TemporaryFolder.with(prefix: "lsver") { scratch in
            for tool in Self.tools {
                let run = try ChildProcess.run(DaemonHarness.binary(tool), ["--version"], scratch: scratch, timeout: 30)
                #expect(run.status == 0, "\(tool): \(run.stderr)")
                #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == LaunchServicesVersion.current, "\(tool) --version: \(run.stdout)")
            }
        }
    }

    @Test("docs/man names every option the tool's --help names (scripts/generate-man-pages regenerates them)")
    func manPagesNameOptions() throws {
        try TemporaryFolder.with(prefix: "lsman") { scratch in
            for tool in Self.tools {
                let page = try String(contentsOfFile: Self.repo + "/docs/man/\(tool).1", encoding: .utf8)
                let help = try ChildProcess.run(DaemonHarness.binary(tool), ["--help"], scratch: scratch, timeout: 30).stdout
                let options = Set(help.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") })
                    .filter { $0.hasPrefix("--") && $0.count > 2 }.map { String($0.dropFirst()) })
                #expect(!options.isEmpty, "\(tool) --help names no option")
                for option in options {
                    #expect(page.contains("Fl \(option)"), "docs/man/\(tool).1 lacks \(option); run scripts/generate-man-pages")
                }
            }
        }
    }

    /// A man page's section, from its `.Sh` line to the next.
    static func manSection(_ title: String, of tool: String) throws -> String {
        let page = try String(contentsOfFile: repo + "/docs/man/\(tool).1", encoding: .utf8)
        let after = try #require(page.components(separatedBy: ".Sh \(title)\n").dropFirst().first, "docs/man/\(tool).1 has a section \(title)")
        return after.components(separatedBy: "\n.Sh ").first ?? after
    }

    @Test("docs/man's synopsis is each tool's usage, not 'subcommand'; lsctl's names every verb; no help verb where there is none")
    func manPageSynopsis() throws {
        try TemporaryFolder.with(prefix: "lsmansyn") { scratch in
            for tool in Self.tools {
                let synopsis = try Self.manSection("SYNOPSIS", of: tool)
                #expect(!synopsis.contains("subcommand"), "docs/man/\(tool).1 SYNOPSIS: \(synopsis)")
                let page = try String(contentsOfFile: Self.repo + "/docs/man/\(tool).1", encoding: .utf8)
                if tool != "lsctl" {
                    #expect(!page.contains(".It Em help"), "docs/man/\(tool).1 lists a help verb \(tool) does not have")
                }
            }
            let lsopen = try Self.manSection("SYNOPSIS", of: "lsopen")
            #expect(lsopen.contains(".Ar url\n.Nm\n.Fl -can-open\n.Op Fl -json"), "the URL ends the first form; --can-open is another: \(lsopen)")
            #expect(lsopen.hasSuffix(".Nm\n.Fl -help\n.Nm\n.Fl -version"), "\(lsopen)")
            let lsctl = try Self.manSection("SYNOPSIS", of: "lsctl")
            let help = try ChildProcess.run(DaemonHarness.binary("lsctl"), ["--help"], scratch: scratch, timeout: 30).stdout
            let verbs = (help.components(separatedBy: "SUBCOMMANDS:\n").dropFirst().first ?? "").split(separator: "\n", omittingEmptySubsequences: false)
                .prefix { !$0.isEmpty }.filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
            #expect(verbs.count >= 15, "\(verbs)")
            for verb in verbs {
                #expect(lsctl.contains(".Nm\n.Cm \(verb)\n"), "docs/man/lsctl.1 SYNOPSIS lacks lsctl \(verb)")
            }
            #expect(lsctl.contains(".Cm pasteboard\n.Cm copy\n"), "nested verbs have their own line")
        }
    }

    @Test("docs/man's EXIT STATUS lists each tool's statuses with their meanings, as its --help does")
    func manPageExitStatuses() throws {
        let tables: [(String, [(status: Int32, meaning: String)])] = [("lsopen", ExitCodes.lsopen), ("lsctl", ExitCodes.lsctl), ("launchservicesd", DaemonExitStatus.all)]
        for (tool, table) in tables {
            let section = try Self.manSection("\"EXIT STATUS\"", of: tool)
            #expect(!section.contains(".Ex -std"), "docs/man/\(tool).1 says only that it exits 0 on success")
            let listed = section.split(separator: "\n").compactMap { $0.hasPrefix(".It ") ? Int32($0.dropFirst(4)) : nil }
            #expect(listed == table.map(\.status), "docs/man/\(tool).1 EXIT STATUS lists \(listed)")
            for (status, meaning) in table {
                #expect(section.contains(".It \(status)\n\(meaning)\n"), "docs/man/\(tool).1 EXIT STATUS lacks: \(status) \(meaning)")
            }
        }
    }

    @Test("every lsctl verb takes --json and --socket, as its --help and the README say")
    func everyVerbTakesSharedOptions() throws {
        try TemporaryFolder.with(prefix: "lsverbs") { scratch in
            func help(_ words: [String]) throws -> String {
                try ChildProcess.run(DaemonHarness.binary("lsctl"), words + ["--help"], scratch: scratch, timeout: 30).stdout
            }
            /// The verbs a --help lists under SUBCOMMANDS (`  name   abstract`).
            func verbs(_ text: String) -> [String] {
                guard let list = text.components(separatedBy: "SUBCOMMANDS:\n").dropFirst().first else { return [] }
                return list.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }.compactMap { line in
                    guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first else { return nil }
                    return String(word)
                }
            }
            var checked: [String] = []
            for verb in verbs(try help([])) {
                let nested = verbs(try help([verb]))
                for words in nested.isEmpty ? [[verb]] : nested.map({ [verb, $0] }) {
                    let text = try help(words)
                    #expect(text.contains("--json") && text.contains("--socket"), "lsctl \(words.joined(separator: " ")) --help: \(text)")
                    checked.append(words.joined(separator: " "))
                }
            }
            #expect(checked.contains("logs") && checked.contains("pasteboard paste") && checked.count >= 18, "\(checked)")
        }
    }

    @Test("lsctl prints text only through printEscaped and printJSON: no plain print bypasses the escaping")
    func lsctlPrintsEscaped() throws {
        let folder = Self.repo + "/Sources/lsctl"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") && $0 != "TerminalOutput.swift" }
        #expect(files.count > 3, "\(files)")
        let plain = try Regex(#"(^|[^A-Za-z0-9_.])print\(|Swift\.print"#)
        for file in files {
            let lines = try String(contentsOfFile: folder + "/" + file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(!line.contains(plain), "Sources/lsctl/\(file):\(number + 1) prints without escaping: \(line)")
            }
        }
    }

    /// The exit statuses a README section's table lists (rows `| N | …`).
    static func documentedStatuses(tool: String) throws -> Set<Int32> {
        let readme = try String(contentsOfFile: repo + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n### `\(tool)`\n").dropFirst().first?.components(separatedBy: "\n### ").first,
                                   "README has a section ### `\(tool)`")
        return Set(section.split(separator: "\n").compactMap { line -> Int32? in
            guard line.hasPrefix("| ") else { return nil }
            return Int32(line.dropFirst(2).prefix { $0 != " " })
        })
    }

    @Test("the README lists every exit status of each tool, and only those; each tool's --help lists them too")
    func exitStatusesDocumented() throws {
        let tables: [(String, [(status: Int32, meaning: String)])] = [("lsopen", ExitCodes.lsopen), ("lsctl", ExitCodes.lsctl), ("launchservicesd", DaemonExitStatus.all)]
        try TemporaryFolder.with(prefix: "lsexit") { scratch in
            for (tool, table) in tables {
                #expect(try Self.documentedStatuses(tool: tool) == Set(table.map(\.status)), "README's table for \(tool)")
                let help = try ChildProcess.run(DaemonHarness.binary(tool), ["--help"], scratch: scratch, timeout: 30).stdout
                    .split(whereSeparator: \.isWhitespace).joined(separator: " ")
                for (status, meaning) in table {
                    #expect(help.contains("\(status) \(meaning)"), "\(tool) --help lacks: \(status) \(meaning)")
                }
            }
        }
        // Every error code lsopen can end with has its status in the table.
        for code in OpenErrorCode.allCases {
            #expect(ExitCodes.lsopen.contains { $0.status == ExitCodes.code(for: code) }, "\(code)")
        }
    }

    @Test("every refusal of lsctl exits 1, the test hook debug-stall's too; an unreachable daemon 69")
    func refusalsExitOne() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let stall = try h.lsctl("debug-stall")
        #expect(stall.status == 1, "\(stall.stderr)")
        #expect(stall.stderr.contains("debug-stall is disabled"), "\(stall.stderr)")
        #expect(try h.lsctl("explain", "not a url").status == 1)
        let away = try h.lsctl("debug-stall", "--socket", h.root + "/no-such-socket")
        #expect(away.status == 69, "\(away.stderr)")
    }

    @Test("lsctl --socket P VERB works as lsctl VERB --socket P (and --json), for every kind of verb")
    func sharedOptionsBeforeTheVerb() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        // Only the option can find the daemon.
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.root + "/no-such-socket"
        func lsctl(_ arguments: [String]) throws -> ToolRun {
            try ChildProcess.run(DaemonHarness.binary("lsctl"), arguments, environment: environment, scratch: h.root, timeout: 30)
        }
        let status = try lsctl(["--socket", h.socket, "status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("socket:     \(h.socket)"))
        for (before, after) in [
            (["--socket=\(h.socket)", "--json", "apps"], ["apps", "--json", "--socket=\(h.socket)"]),
            (["--json", "--socket", h.socket, "explain", "alpha:x"], ["explain", "alpha:x", "--json", "--socket", h.socket]),
            (["--socket", h.socket, "pasteboard", "list"], ["pasteboard", "list", "--socket", h.socket]),
            (["--socket", h.socket, "default", "alpha"], ["default", "alpha", "--socket", h.socket]),
            (["--socket", h.socket, "logs", "test.alpha"], ["logs", "test.alpha", "--socket", h.socket]),
            (["--json", "--socket", h.socket, "logs", "test.alpha"], ["logs", "test.alpha", "--socket", h.socket, "--json"]),
            (["--socket", h.socket, "explain", "not a url"], ["explain", "not a url", "--socket", h.socket]),
        ] {
            let leading = try lsctl(before), trailing = try lsctl(after)
            #expect(leading.status == trailing.status, "\(before): \(leading.stderr)")
            #expect(leading.stdout == trailing.stdout, "\(before)")
            #expect(leading.stderr == trailing.stderr, "\(before)")
        }
        #expect(try lsctl(["--socket", h.socket, "apps"]).status == 0)
        #expect(try lsctl(["--socket", h.socket, "explain", "not a url"]).status == 1, "a refusal exits 1")
        // Every verb takes --json, logs included: where the app's output goes, and its lines.
        let logs = try lsctl(["--json", "--socket", h.socket, "logs", "test.alpha"])
        #expect(logs.status == 0, "\(logs.stderr)")
        #expect(logs.json?["destination"] as? String == h.appLogFolder, "\(logs.stdout)")
        #expect(logs.json?["lines"] as? [String] == [], "test.alpha has written nothing: \(logs.stdout)")
        #expect(try lsctl(["--socket", h.socket]).status == 64, "no verb: a usage error")
        let help = try lsctl(["--socket", h.socket, "--help"])
        #expect(help.status == 0 && help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("may also come before the verb"), "\(help.stdout)\(help.stderr)")
    }
}
