/// The phases of an open that the daemon waits on, each with its own deadline.
///
/// `launch` is spawn → check-in; the two launch methods follow; `openURL` is delivery
/// (`open(url:…)` or the legacy `handleOpen(url:)`). Raw values are stable: they appear in
/// `lsopen --json`, logs and on the wire.
public enum LaunchPhase: String, Sendable, CaseIterable, Codable {
    case launch
    case willFinishLaunching
    case didFinishLaunching
    case openURL

    /// Phases whose deadline, when missed, terminates the app (iOS's launch watchdog).
    public var isLaunchPhase: Bool { self != .openURL }
}

/// One-way lifecycle notifications the daemon sends an app; none waits for a reply.
public enum AppNotification: String, Sendable, CaseIterable, Codable {
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    case willEnterForeground
}

/// The lifecycle states of an app, as on iOS. One app at a time is frontmost (active).
public enum AppState: String, Sendable, CaseIterable, Codable {
    case notRunning
    case launching
    case inactive
    case active
    case background
    case suspended
}

/// Which delegate method took the URL: iOS calls the modern one when implemented,
/// else the legacy one, else nothing.
public enum DeliveryMethod: String, Sendable, Codable {
    case open
    case handleOpen
    case none
}

/// The deadline of each phase. Defaults are generous for a human at a shell and short
/// enough that nobody waits long on a hung app.
public struct PhaseDeadlines: Sendable, Equatable {
    public var launch: Duration
    public var willFinishLaunching: Duration
    public var didFinishLaunching: Duration
    public var openURL: Duration

    public init(launch: Duration = .seconds(10), willFinishLaunching: Duration = .seconds(5), didFinishLaunching: Duration = .seconds(5), openURL: Duration = .seconds(5)) {
        self.launch = launch
        self.willFinishLaunching = willFinishLaunching
        self.didFinishLaunching = didFinishLaunching
        self.openURL = openURL
    }

    public subscript(phase: LaunchPhase) -> Duration {
        switch phase {
        case .launch: return launch
        case .willFinishLaunching: return willFinishLaunching
        case .didFinishLaunching: return didFinishLaunching
        case .openURL: return openURL
        }
    }
}

/// How a process ended, as `waitid` reports it.
public enum ExitStatus: Sendable, Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signaled(let signal): return "was killed by signal \(signal)\(Self.signalName(signal).map { " (\($0))" } ?? "")"
        }
    }

    static func signalName(_ s: Int32) -> String? {
        switch s {
        case 1: return "SIGHUP"
        case 2: return "SIGINT"
        case 3: return "SIGQUIT"
        case 4: return "SIGILL"
        case 5: return "SIGTRAP"
        case 6: return "SIGABRT"
        case 7: return "SIGBUS"
        case 8: return "SIGFPE"
        case 9: return "SIGKILL"
        case 11: return "SIGSEGV"
        case 13: return "SIGPIPE"
        case 15: return "SIGTERM"
        default: return nil
        }
    }
}
