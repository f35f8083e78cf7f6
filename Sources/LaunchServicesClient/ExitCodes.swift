import LaunchServicesCore

/// The tools' documented exit statuses (README, each tool's `--help`). The tables at the end
/// list every status lsopen and lsctl exit with (launchservicesd's: `DaemonExitStatus`); a
/// test holds the README's tables to them.
public enum ExitCodes {
    public static let shellIdentity = SourceIdentity.user
    /// `lsopen --can-open`: no app handles the scheme. `lsctl`: the daemon refused.
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let invalidURL: Int32 = 65
    public static let noHandler: Int32 = 66
    public static let refused: Int32 = 67
    public static let appFailed: Int32 = 68
    public static let unavailable: Int32 = 69
    /// `lsopen --wait`: the app called back x-error.
    public static let callbackError: Int32 = 70
    /// `lsopen --wait`: the app called back x-cancel.
    public static let callbackCancelled: Int32 = 71
    /// `lsopen --wait`: no callback arrived before the deadline.
    public static let callbackTimeout: Int32 = 72
    /// lsopen's chooser: the user chose no app (an empty answer, or the end of input).
    public static let cancelled: Int32 = 73
    /// `lsctl rescan`: some of the apps folders could not be read now (sysexits' EX_TEMPFAIL).
    public static let incomplete: Int32 = 75

    public static func code(for error: OpenErrorCode?) -> Int32 {
        guard let error else { return 0 }
        switch error {
        case .invalidURL: return invalidURL
        case .noHandler: return noHandler
        case .vetoed, .notHandled, .notPermitted, .invalidRequest: return refused
        case .launchFailed, .crashed, .timeout: return appFailed
        case .unavailable, .daemonUnreachable, .protocolError: return unavailable
        case .cancelled: return cancelled
        }
    }

    /// Every status `lsopen` exits with.
    public static let lsopen: [(status: Int32, meaning: String)] = [
        (0, "delivered and handled; a desktop app: delivered over D-Bus, still running after the grace, or exited 0 within it; --can-open: an app handles the scheme; --wait: the app called back x-success"),
        (failure, "--can-open: no app handles the scheme"),
        (usage, "usage error"),
        (invalidURL, "invalid URL (--can-open too)"),
        (noHandler, "no app handles the scheme"),
        (refused, "refused (by the app, or as not permitted or an invalid request)"),
        (appFailed, "the app failed (launch failed, crashed, timed out; a desktop app failed to start or exited with an error within the grace)"),
        (unavailable, "daemon unreachable or unavailable"),
        (callbackError, "--wait: the app called back x-error"),
        (callbackCancelled, "--wait: the app called back x-cancel"),
        (callbackTimeout, "--wait: no callback before --timeout"),
        (cancelled, "the chooser was answered with nothing (Enter, Ctrl-D): nothing opened"),
    ]

    /// Every status `lsctl` exits with.
    public static let lsctl: [(status: Int32, meaning: String)] = [
        (0, "done"),
        (failure, "the daemon refused the request (its message says why); pasteboard paste: nothing to paste; pasteboard copy: stdin cannot be read or holds over 64 MiB; logs: no such app, or the daemon does not say where app output goes; export-xdg: a file could not be written"),
        (usage, "usage error"),
        (unavailable, "daemon unreachable or unavailable, or its answer is not one this lsctl knows"),
        (incomplete, "rescan: a folder or bundle could not be read now (named); nothing of it was withdrawn; the daemon reads the folders again shortly"),
    ]
}

/// The one JSON object `lsopen --json` prints for an open.
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
