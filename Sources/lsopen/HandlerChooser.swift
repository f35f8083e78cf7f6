// FoundationEssentials, not Foundation: lsopen is started for every URL a desktop opens, and
// all of Foundation (its internationalization and ICU's data) linked in doubles the binary's
// pages to map and conformance records to scan at start. This file needs only JSONDecoder.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol

/// The terminal chooser (like Android's "Open with"): when a scheme is claimed by several
/// handlers — apps registered with the daemon, desktop entries, or both — and the user chose
/// no default, lsopen on a terminal asks which one, once or always ("always" sets the
/// default, as `lsctl default` would). Desktop entries alone, when a `[Default Applications]`
/// line chose among them, are not asked about: that line is the choice, as for every other
/// opener on the desktop. Without a terminal it never asks.
struct HandlerChooser {
    let client: LaunchServicesClient
    let url: String
    let timeout: Duration

    /// Whether lsopen can ask: stdin and stderr are both a terminal.
    static var hasTerminal: Bool { isatty(0) == 1 && isatty(2) == 1 }

    enum Decision: Equatable {
        /// Open as the daemon's rule says (no question was needed, or none could be asked).
        case byRule
        case app(String)
    }

    /// Asks if the scheme is contested with no default (or always, when `forced`).
    func decide(forced: Bool) throws -> Decision {
        let report: ExplainReport
        do {
            let json = try client.command(.explain(url: url), timeout: timeout)
            report = try JSONDecoder().decode(ExplainReport.self, from: Data(json.utf8))
        } catch {
            // Nothing to choose from (an invalid URL, no handler): the open itself will say why.
            return .byRule
        }
        guard report.claimants.count > 0, forced || Self.isContested(report) else { return .byRule }
        var text = "'\(report.scheme):' is claimed by \(report.claimants.count) app\(report.claimants.count == 1 ? "" : "s")"
        text += report.userDefault.map { "; your default is \($0)" } ?? " and you have chosen no default"
        text += ". Open \(TerminalText.escapingControls(url)) with:\n"
        text += Self.choices(report)
        text += "Choose 1-\(report.claimants.count) just once, or add 'a' to always use it (e.g. 1a); Enter or Ctrl-D opens nothing: "
        for _ in 0..<3 {
            StandardStreams.error(text)
            guard let line = readLine() else {
                StandardStreams.error("\n")
                throw Self.cancelled("the chooser was closed (end of input)")
            }
            switch Self.parse(line, count: report.claimants.count) {
            case .cancel:
                throw Self.cancelled("no app was chosen (an empty answer)")
            case .invalid:
                text = "Not a choice: \(TerminalText.quoted(line)). Choose 1-\(report.claimants.count), optionally followed by 'a'; Enter opens nothing: "
            case .choice(let index, let always):
                let app = report.claimants[index - 1]
                if always {
                    _ = try client.command(.setDefault(scheme: report.scheme, app: app), timeout: timeout)
                    StandardStreams.error("'\(report.scheme):' now always opens with \(app) (undo: lsctl default --clear \(report.scheme))\n")
                }
                return .app(app)
            }
        }
        throw Self.cancelled("no app was chosen in three answers")
    }

    /// Whether to ask: several handlers and no default of the user's (`lsctl default`), unless
    /// they are all desktop entries and a `[Default Applications]` line chose among them.
    static func isContested(_ report: ExplainReport) -> Bool {
        guard report.claimants.count > 1, report.userDefault == nil else { return false }
        let onlyDesktop = report.claimants.allSatisfy(report.desktopClaimants.contains)
        return !(onlyDesktop && report.desktop?.decidedBy?.group == DesktopSourceReport.defaultApplications)
    }

    /// The numbered list of handlers, each with its kind; the one the rule picks is marked.
    static func choices(_ report: ExplainReport) -> String {
        var text = ""
        for (index, app) in report.claimants.enumerated() {
            let kind = report.desktopClaimants.contains(app) ? "desktop entry" : "app"
            text += "  \(index + 1)) \(TerminalText.escapingControls(app))  [\(kind)]\(app == report.app ? "  (opens it now)" : "")\n"
        }
        return text
    }

    /// Nothing opened because the user chose no app: `cancelled` (exit 73), never the first
    /// choice by default.
    static func cancelled(_ why: String) -> ClientError {
        .refused(OpenError(.cancelled, "\(why): nothing was opened"))
    }

    /// An answer at the chooser.
    enum Answer: Equatable {
        /// "2" (just once), "2a" or "2 always" (always).
        case choice(index: Int, always: Bool)
        /// An empty answer: open nothing.
        case cancel
        case invalid
    }

    static func parse(_ line: String, count: Int) -> Answer {
        let text = trimmed(line).lowercased()
        if text.isEmpty { return .cancel }
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard let index = Int(digits), (1...count).contains(index) else { return .invalid }
        switch trimmed(text.dropFirst(digits.count)) {
        case "": return .choice(index: index, always: false)
        case "a", "always": return .choice(index: index, always: true)
        default: return .invalid
        }
    }

    /// The text without leading or trailing blanks: what Foundation's `.whitespaces` trims
    /// (tabs and Unicode spaces, not line breaks), which FoundationEssentials does not have.
    private static func trimmed(_ text: some StringProtocol) -> String {
        let isBlank: (Character) -> Bool = { $0.isWhitespace && !$0.isNewline }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(text[first...last])
    }
}
