import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// `--version` and the man pages of the three tools, run as built.
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
}
