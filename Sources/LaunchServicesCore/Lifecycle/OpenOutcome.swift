/// The stable error codes an open can end with. Raw values are the `error.code`
/// strings of `lsopen --json` and the wire protocol; never rename one.
public enum OpenErrorCode: String, Sendable, CaseIterable, Codable {
    case invalidURL
    case noHandler
    case launchFailed
    case vetoed
    case notHandled
    case crashed
    case timeout
    case notPermitted
    /// The daemon cannot take the request (shutting down, too many pending opens).
    case unavailable
    /// Client side: no daemon answered on the socket.
    case daemonUnreachable
    /// Either side broke the wire protocol (bad frame, wrong version).
    case protocolError
    /// A command named something that does not exist or is malformed (a bundle that does
    /// not validate, an unknown bundle id, a scheme nobody claims).
    case invalidRequest
    /// Client side: the user chose no app at lsopen's chooser (an empty answer, or the end
    /// of input); nothing was opened. Never on the wire.
    case cancelled
}

/// A named failure: the code, the phase when one applies, and a message for a person.
public struct OpenError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: OpenErrorCode
    public var phase: LaunchPhase?
    public var message: String

    public init(_ code: OpenErrorCode, phase: LaunchPhase? = nil, _ message: String) {
        self.code = code
        self.phase = phase
        self.message = message
    }

    public var description: String { message }
}

/// Time spent in one phase, in nanoseconds.
public struct PhaseTiming: Sendable, Equatable {
    public var phase: LaunchPhase
    public var nanoseconds: UInt64
    public init(phase: LaunchPhase, nanoseconds: UInt64) {
        self.phase = phase
        self.nanoseconds = nanoseconds
    }
}

/// What the caller of `openURL` hears.
public struct OpenOutcome: Sendable, Equatable {
    public var app: String?
    public var error: OpenError?
    /// `true` when the app was launched (cold) for this open.
    public var launched: Bool
    public var method: DeliveryMethod?
    public var timings: [PhaseTiming]
    /// Where the open found the app (cold, warm, resumed, hot); nil when it never got that far.
    public var launchState: LaunchState?
    /// From the daemon receiving the request to its answer, queueing included.
    public var totalNanoseconds: UInt64?
    /// What kind of app `app` is; nil from daemons before 0.3 (and for no app): native.
    public var handlerKind: HandlerKind?
    /// For a desktop app: what became of its launch (`delivered`, `running`, `forwarded`,
    /// `exited`, `failedToStart`), its pid, exit status and last stderr lines. Its `failure`
    /// is never set here: the failure is `error`.
    public var desktop: DesktopLaunchOutcome?

    public var opened: Bool { error == nil }

    public init(app: String?, error: OpenError? = nil, launched: Bool = false, method: DeliveryMethod? = nil, timings: [PhaseTiming] = [], launchState: LaunchState? = nil, totalNanoseconds: UInt64? = nil,
                handlerKind: HandlerKind? = nil, desktop: DesktopLaunchOutcome? = nil) {
        self.app = app
        self.handlerKind = handlerKind
        self.desktop = desktop
        self.error = error
        self.launched = launched
        self.method = method
        self.timings = timings
        self.launchState = launchState
        self.totalNanoseconds = totalNanoseconds
    }

    public static func failure(_ error: OpenError, app: String? = nil, launched: Bool = false, timings: [PhaseTiming] = [], launchState: LaunchState? = nil) -> OpenOutcome {
        OpenOutcome(app: app, error: error, launched: launched, timings: timings, launchState: launchState)
    }
}
