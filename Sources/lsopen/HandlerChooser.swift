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
/// apps and the user chose no default, lsopen on a terminal asks which app, once or always
/// ("always" sets the default, as `lsctl default` would). Without a terminal it never asks.
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
        let contested = report.claimants.count > 1 && report.userDefault == nil
        guard report.claimants.count > 0, forced || contested else { return .byRule }
        var text = "'\(report.scheme):' is claimed by \(report.claimants.count) app\(report.claimants.count == 1 ? "" : "s")"
        text += report.userDefault.map { "; your default is \($0)" } ?? " and you have chosen no default"
        text += ". Open \(url) with:\n"
        for (index, app) in report.claimants.enumerated() {
            text += "  \(index + 1)) \(app)\(app == report.app ? "  (opens it now)" : "")\n"
        }
        let first = report.app.flatMap { report.claimants.firstIndex(of: $0) }.map { $0 + 1 } ?? 1
        text += "Choose 1-\(report.claimants.count) just once, or add 'a' to always use it (e.g. \(first)a); Enter for \(first): "
        for _ in 0..<3 {
            StandardStreams.error(text)
            guard let line = readLine() else { return .byRule }
            guard let choice = Self.parse(line, count: report.claimants.count, preselected: first) else {
                text = "Not a choice: '\(line)'. Choose 1-\(report.claimants.count), optionally followed by 'a': "
                continue
            }
            let app = report.claimants[choice.index - 1]
            if choice.always {
                _ = try client.command(.setDefault(scheme: report.scheme, app: app), timeout: timeout)
                StandardStreams.error("'\(report.scheme):' now always opens with \(app) (undo: lsctl default --clear \(report.scheme))\n")
            }
            return .app(app)
        }
        throw ClientError.refused(OpenError(.invalidRequest, "no app chosen"))
    }

    /// "2" (just once), "2a" or "2 always" (always), "" (the preselected one, once).
    static func parse(_ line: String, count: Int, preselected: Int) -> (index: Int, always: Bool)? {
        let text = trimmed(line).lowercased()
        if text.isEmpty { return (preselected, false) }
        let digits = text.prefix { $0.isNumber }
        guard let index = Int(digits), (1...count).contains(index) else { return nil }
        let rest = trimmed(text.dropFirst(digits.count))
        switch rest {
        case "": return (index, false)
        case "a", "always": return (index, true)
        default: return nil
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
