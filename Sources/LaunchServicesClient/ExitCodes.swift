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
