/// The one JSON object `lsopen --json` prints for an open. It lives in the core because the
/// daemon's D-Bus `Open` answers with the same object as values (`entries`, held equal to
/// reading `render`'s text by a test), so the two answers cannot drift apart.
public enum OutcomeJSON {
    /// `waitNanoseconds`: the wait as the caller saw it; `fellBackFrom`: the URL no app
    /// handled, when this is the `--fallback` open.
    public static func render(_ outcome: OpenOutcome, url: String, waitNanoseconds: UInt64? = nil, fellBackFrom: String? = nil) -> String {
        var fields = ["\"opened\":\(outcome.opened)", "\"url\":\(JSONText.quote(url))"]
        if let from = fellBackFrom { fields.append("\"fallbackFrom\":\(JSONText.quote(from))") }
        if let app = outcome.app { fields.append("\"app\":\(JSONText.quote(app))") }
        if let kind = outcome.handlerKind { fields.append("\"kind\":\(JSONText.quote(kind.rawValue))") }
        if let desktop = outcome.desktop {
            if let app = outcome.app { fields.append("\"desktopID\":\(JSONText.quote(app))") }
            fields.append("\"outcome\":\(JSONText.quote(desktop.kind.rawValue))")
            if let pid = desktop.pid { fields.append("\"pid\":\(pid)") }
            switch desktop.exitStatus {
            case .exited(let status)?: fields.append("\"exitStatus\":\(status)")
            case .signaled(let signal)?: fields.append("\"signal\":\(signal)")
            case nil: break
            }
            if !desktop.stderrTail.isEmpty { fields.append("\"stderr\":[" + desktop.stderrTail.map(JSONText.quote).joined(separator: ",") + "]") }
        }
        fields.append("\"launched\":\(outcome.launched)")
        if let state = outcome.launchState { fields.append("\"launchState\":\(JSONText.quote(state.rawValue))") }
        if let method = outcome.method { fields.append("\"method\":\(JSONText.quote(method.rawValue))") }
        if !outcome.timings.isEmpty {
            let phases = outcome.timings.map { "\(JSONText.quote($0.phase.rawValue)):\(milliseconds($0.nanoseconds))" }
            fields.append("\"phasesMs\":{" + phases.joined(separator: ",") + "}")
        }
        if let total = outcome.totalNanoseconds { fields.append("\"totalMs\":\(milliseconds(total))") }
        if let wait = waitNanoseconds { fields.append("\"waitMs\":\(milliseconds(wait))") }
        if let error = outcome.error {
            var e = ["\"code\":\(JSONText.quote(error.code.rawValue))", "\"message\":\(JSONText.quote(error.message))"]
            if let phase = error.phase { e.append("\"phase\":\(JSONText.quote(phase.rawValue))") }
            fields.append("\"error\":{" + e.joined(separator: ",") + "}")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The same object as `render`'s, as values, key for key and in the same order, each value
    /// what reading `render`'s text gives (`PropertyListJSON.parse`, nulls left out): the
    /// D-Bus `Open` answers with it without writing JSON and reading it back. A test compares
    /// the two on generated outcomes.
    public static func entries(_ outcome: OpenOutcome, url: String, fellBackFrom: String? = nil) -> [(String, PropertyListValue)] {
        var fields: [(String, PropertyListValue)] = [("opened", .boolean(outcome.opened)), ("url", .string(url))]
        fields.reserveCapacity(10)
        if let from = fellBackFrom { fields.append(("fallbackFrom", .string(from))) }
        if let app = outcome.app { fields.append(("app", .string(app))) }
        if let kind = outcome.handlerKind { fields.append(("kind", .string(kind.rawValue))) }
        if let desktop = outcome.desktop {
            if let app = outcome.app { fields.append(("desktopID", .string(app))) }
            fields.append(("outcome", .string(desktop.kind.rawValue)))
            if let pid = desktop.pid { fields.append(("pid", .integer(Int64(pid)))) }
            switch desktop.exitStatus {
            case .exited(let status)?: fields.append(("exitStatus", .integer(Int64(status))))
            case .signaled(let signal)?: fields.append(("signal", .integer(Int64(signal))))
            case nil: break
            }
            if !desktop.stderrTail.isEmpty { fields.append(("stderr", .array(desktop.stderrTail.map { .string($0) }))) }
        }
        fields.append(("launched", .boolean(outcome.launched)))
        if let state = outcome.launchState { fields.append(("launchState", .string(state.rawValue))) }
        if let method = outcome.method { fields.append(("method", .string(method.rawValue))) }
        if !outcome.timings.isEmpty {
            fields.append(("phasesMs", .dictionary(outcome.timings.map { ($0.phase.rawValue, .real(Milliseconds.value($0.nanoseconds))) })))
        }
        if let total = outcome.totalNanoseconds { fields.append(("totalMs", .real(Milliseconds.value(total)))) }
        if let error = outcome.error {
            var e: [(String, PropertyListValue)] = [("code", .string(error.code.rawValue)), ("message", .string(error.message))]
            if let phase = error.phase { e.append(("phase", .string(phase.rawValue))) }
            fields.append(("error", .dictionary(e)))
        }
        return fields
    }

    /// The text report's parenthesis: how the app was found, each phase, the daemon's total
    /// and the caller's wait, e.g. `warm, method open; openURL 0.412 ms; total 0.518 ms, wait 1.203 ms`.
    public static func summary(_ outcome: OpenOutcome, waitNanoseconds: UInt64) -> String {
        var parts = [(outcome.launchState?.rawValue ?? (outcome.launched ? "cold" : "warm")) + (outcome.method.map { ", method \($0.rawValue)" } ?? "")]
        let phases = outcome.timings.map { "\($0.phase.rawValue) \(milliseconds($0.nanoseconds)) ms" }
        if !phases.isEmpty { parts.append(phases.joined(separator: ", ")) }
        parts.append((outcome.totalNanoseconds.map { "total \(milliseconds($0)) ms, " } ?? "") + "wait \(milliseconds(waitNanoseconds)) ms")
        return parts.joined(separator: "; ")
    }

    /// The text report of an open that succeeded, one line. A desktop app's says only what
    /// is known of it: the D-Bus reply, still running after the grace, or exited 0 within it.
    public static func successLine(_ outcome: OpenOutcome, url: String, waitNanoseconds: UInt64) -> String {
        let shownURL = TerminalText.escapingControls(url)
        let app = TerminalText.escapingControls(outcome.app ?? "?")
        let times = (outcome.totalNanoseconds.map { "total \(milliseconds($0)) ms, " } ?? "") + "wait \(milliseconds(waitNanoseconds)) ms"
        guard let desktop = outcome.desktop else {
            return "opened \(shownURL) in \(app) (\(summary(outcome, waitNanoseconds: waitNanoseconds)))"
        }
        let pid = desktop.pid.map { "pid \($0)" } ?? "pid unknown"
        switch desktop.kind {
        case .delivered:
            return "delivered \(shownURL) to \(app) (desktop app, over D-Bus; \(times))"
        case .running:
            return "started \(app) for \(shownURL): still running after the grace (\(pid); \(times))"
        case .forwarded:
            return "handed \(shownURL) to \(app): \(pid) exited 0 within the grace, as an app does when it passes the URL to its running instance (\(times))"
        case .exited, .failedToStart:
            // Never reached for a success; said plainly should a daemon send it.
            return "\(app) for \(shownURL): \(desktop.kind.rawValue) (\(times))"
        }
    }

    /// Milliseconds with microsecond precision, as text.
    public static func milliseconds(_ ns: UInt64) -> String { Milliseconds.text(ns, decimals: 3) }
}
