import ArgumentParser
import Foundation
import LaunchServicesClient
import LaunchServicesProtocol

/// `lsctl quit ID`: end a running app the way the daemon would.
struct Quit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Quit a running app: its connection closes (it runs willTerminate and exits); still alive after the grace period, it gets SIGTERM, then SIGKILL.",
        discussion: "Waits until the app has exited and says how it ended: exited, terminated (SIGTERM) or killed (SIGKILL). Opens waiting for it are answered unavailable.")

    @Argument(help: "The bundle id of the app to quit.") var id: String
    @OptionGroup var common: CommonOptions

    func run() throws {
        let report = try common.command(.quit(id: id), as: QuitReport.self)
        let how = switch report.ended {
        case "killed": "killed with SIGKILL: it ignored its closed connection and SIGTERM"
        case "terminated": "ended by SIGTERM: it did not exit when its connection closed"
        default: "exited by itself after its connection closed"
        }
        printEscaped("\(report.quit) (pid \(report.pid.map { "\($0)" } ?? "?")) \(how) (\(report.status)) in \(String(format: "%.2f", report.seconds)) s")
    }
}

/// `lsctl history`: the recent opens, newest last.
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the recent opens: time, who asked, scheme, app, launch state, outcome and phase times (never the URLs).",
        discussion: "Every open the daemon answered: opened, refused (invalid URL, no handler, not permitted, a limit), failed, ended after its caller left (callerLeft), or withdrawn (its caller left before the app had it). The daemon keeps the last 1000 in memory; they are gone when it restarts.")

    @Option(name: .short, help: "Show only the last N opens.") var n: Int?
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if let n, n < 1 { throw ValidationError("-n must be at least 1, not \(n)") }
    }

    func run() throws {
        var quiet = common
        quiet.json = false
        var entries = try quiet.query(.history, as: [HistoryEntry].self)
        if let n { entries = Array(entries.suffix(n)) }
        if common.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            printJSON(String(decoding: try encoder.encode(entries), as: UTF8.self))
            return
        }
        guard !entries.isEmpty else {
            printEscaped("no opens yet")
            return
        }
        for e in entries {
            let phases = ["launch", "willFinishLaunching", "didFinishLaunching", "openURL"].compactMap { phase in
                e.phasesMs[phase].map { "\(phase) \(String(format: "%.2f", $0))" }
            }
            var line = "\(e.time)  \(e.source) → \(e.scheme.isEmpty ? "(no scheme)" : e.scheme + ":") in \(e.app ?? "-")  \(e.outcome)"
            if let state = e.launchState { line += " (\(state))" }
            if let desktop = e.desktopOutcome { line += " (desktop app: \(desktop)\(e.pid.map { ", pid \($0)" } ?? ""))" }
            if e.callerLeft == true, e.outcome != HistoryEntry.withdrawn { line += " after the caller left" }
            if let via = e.via { line += " (via \(via))" }
            if !phases.isEmpty { line += "  " + phases.joined(separator: ", ") + " ms" }
            if let total = e.totalMs { line += "; total \(String(format: "%.2f", total)) ms" }
            printEscaped(line)
        }
    }
}
