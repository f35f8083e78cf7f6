/// What a caller hears about one desktop app process it asked for: only what is known, and
/// never that the app opened a URL when it failed.
///
/// A desktop app has no check-in and no phases, so the daemon knows four things: the
/// process started or not; after a short grace it is still running; or within the grace it
/// exited, with status 0 (usually: it handed the URL to an instance already running) or not.
/// D-Bus activation adds a fifth: the app's reply.
public struct DesktopLaunchOutcome: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The app answered `org.freedesktop.Application.Open` (D-Bus activation).
        case delivered
        /// The process was still alive when the grace ended.
        case running
        /// The process exited with status 0 within the grace.
        case forwarded
        /// The process exited otherwise within the grace (`exitStatus`, `stderrTail`).
        case exited
        /// No process ran the app (`failure`); for D-Bus activation, the app did not take
        /// the URLs (`failure` is `.dbus`, and the text says "not delivered").
        case failedToStart

        /// Whether the URL can be said to have reached the app.
        public var isSuccess: Bool { self == .delivered || self == .running || self == .forwarded }
    }

    public var kind: Kind
    /// The app's process, when one was started.
    public var pid: Int32?
    /// How the process ended (`exited`, `forwarded`); `nil` for `exited` when the kernel
    /// could not tell (see `DesktopLauncher`).
    public var exitStatus: ExitStatus?
    /// The last lines the process wrote to stderr before it exited, oldest first.
    public var stderrTail: [String]
    public var failure: DesktopLaunchFailure?

    public init(kind: Kind, pid: Int32? = nil, exitStatus: ExitStatus? = nil, stderrTail: [String] = [], failure: DesktopLaunchFailure? = nil) {
        self.kind = kind
        self.pid = pid
        self.exitStatus = exitStatus
        self.stderrTail = stderrTail
        self.failure = failure
    }

    /// The app replied to `org.freedesktop.Application.Open` (or `Activate`): it has the URLs.
    public static let delivered = Self(kind: .delivered)

    public static func running(pid: Int32) -> Self {
        Self(kind: .running, pid: pid)
    }

    /// The process ended within the grace: `forwarded` for status 0 (its stderr is not
    /// shown, nor waited for), else `exited`.
    public static func ended(pid: Int32, status: ExitStatus?, stderrTail: [String]) -> Self {
        let forwarded = status == .exited(0)
        return Self(kind: forwarded ? .forwarded : .exited, pid: pid, exitStatus: status, stderrTail: forwarded ? [] : stderrTail)
    }

    public static func failed(_ failure: DesktopLaunchFailure) -> Self {
        Self(kind: .failedToStart, failure: failure)
    }

    /// One line for a person (the stderr lines are not in it).
    public var description: String {
        switch kind {
        case .delivered: return "delivered"
        case .running: return "running (pid \(pid ?? 0))"
        case .forwarded: return "forwarded: exited with status 0 within the grace (pid \(pid ?? 0))"
        case .exited: return "exited: " + (exitStatus.map { "\($0)" } ?? "status unknown") + " (pid \(pid ?? 0))"
        case .failedToStart:
            if case .dbus(let failure)? = failure { return "not delivered: \(failure)" }
            return "failed to start: " + (failure.map { "\($0)" } ?? "unknown reason")
        }
    }
}

/// Why a desktop app did not start. Each says what to do about it.
public enum DesktopLaunchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entry's Exec line cannot be used (or not for these URLs).
    case exec(ExecLineError)
    /// The program is not a path and is not found on PATH.
    case programNotFound(program: String)
    /// `Terminal=true`, and no terminal emulator was found (`tried` names what was looked for).
    case noTerminal(tried: String)
    /// The kernel refused: `stage` is what failed (`exec`, `chdir`, `spawn`, …), `path`
    /// what it was done to, `errno` and `reason` the error.
    case system(stage: String, path: String, errno: Int32, reason: String)
    /// More desktop app processes are being watched than the daemon keeps.
    case tooManyRunning(limit: Int)
    /// The daemon stopped before it learned whether the process started (it may yet run).
    case stopping
    /// D-Bus activation (`DBusActivatable=true`): the call to `org.freedesktop.Application`
    /// got no successful reply, so the app does not have the URLs.
    case dbus(DBusCallFailure)

    public var description: String {
        switch self {
        case .exec(let error):
            return error.description
        case .programNotFound(let program):
            return "\(TerminalText.quoted(program)) is not on PATH: install it, or fix the entry's Exec line"
        case .noTerminal(let tried):
            return "the entry asks for a terminal (Terminal=true) and none was found: \(tried)"
        case .system(let stage, let path, let errno, let reason):
            return "\(stage) \(TerminalText.quoted(path)) failed: \(reason) (errno \(errno))"
        case .tooManyRunning(let limit):
            return "the daemon already watches \(limit) desktop app processes it started; try again when some have exited"
        case .stopping:
            return "the daemon stopped before it learned whether the app started"
        case .dbus(let failure):
            return failure.description
        }
    }
}
