/// The values an `AppDriver` hands back: the messages the app was sent (`AppEvent`), how one
/// open went (`AppOpenResult`), what the app opened (`AppOpenRequest`), and why the driver
/// refused a step (`AppDriverError`).
import LaunchServicesApp
import LaunchServicesClient
import LaunchServicesCore

/// One message the driver sent the app, named after the delegate method it runs.
public enum AppEvent: String, Sendable, Equatable, CustomStringConvertible {
    case willFinishLaunching
    case didFinishLaunching
    /// A URL delivery: `open(_:url:sourceApplication:annotation:)` or `handleOpen(_:url:)`.
    case openURL
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    case willEnterForeground
    /// The connection closed (the daemon shut down).
    case willTerminate

    public var description: String { rawValue }

    init(_ notification: AppNotification) {
        switch notification {
        case .didBecomeActive: self = .didBecomeActive
        case .willResignActive: self = .willResignActive
        case .didEnterBackground: self = .didEnterBackground
        case .willEnterForeground: self = .willEnterForeground
        }
    }
}

/// How one `AppDriver.open(_:)` went, as the app answered it.
public struct AppOpenResult: Sendable, Equatable {
    public var url: String
    /// The app was launched (cold) for this open.
    public var launched: Bool
    /// The URL was delivered and the delegate returned true. (An app implementing no URL
    /// method returns false with method `none`, and the daemon still reports it opened:
    /// see `outcome`.)
    public var accepted: Bool
    /// Which delegate method took the URL; `nil` when it was not delivered (a veto).
    public var method: DeliveryMethod?
    /// The launch method that returned false, if one did; the URL was then not delivered.
    public var vetoedIn: LaunchPhase?
    /// The messages this open sent the app, in order.
    public var events: [AppEvent]
    /// What the daemon answers the caller, from its own state machine.
    public var outcome: OpenOutcome

    /// The error code the daemon answers the caller with, or `nil` when opened.
    public var errorCode: OpenErrorCode? { outcome.error?.code }
    /// The daemon reports the open as done.
    public var opened: Bool { outcome.opened }
}

/// An open the app asked for (`Application.open`, or `reply` to an x-callback-url request).
/// The driver records it instead of sending it anywhere.
public struct AppOpenRequest: Sendable, Equatable {
    public var url: String
    public var annotation: PropertyListValue?
    /// Set for a returning open (a callback reply): the app control goes back to.
    public var returnTo: String?

    public init(url: String, annotation: PropertyListValue? = nil, returnTo: String? = nil) {
        self.url = url
        self.annotation = annotation
        self.returnTo = returnTo
    }

    /// `url` parsed, or `nil` when it does not parse.
    public var parsedURL: ParsedURL? { try? ParsedURL(url) }
}

/// Why the driver refused a step.
public enum AppDriverError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL does not parse (the daemon would answer `invalidURL`).
    case invalidURL(String)
    /// The URL's scheme is not one of the app's (the daemon would open another app).
    case schemeNotClaimed(scheme: String, claimed: [String])
    /// `terminate()` was called; a real daemon would start a new process with a new delegate.
    case terminated
    /// The app's runtime refused a message (a protocol violation or a refusal from the daemon).
    case runtime(String)
    /// The app's opens kept opening more (a completion loop); stopped after this many.
    case tooManyOpens(Int)

    public var description: String {
        switch self {
        case .invalidURL(let reason): return "invalid URL: \(reason)"
        case .schemeNotClaimed(let scheme, let claimed): return "the app does not claim the scheme '\(scheme)' (it claims \(claimed.joined(separator: ", ")))"
        case .terminated: return "the app was terminated; make a new driver to launch it again"
        case .runtime(let message): return "the app runtime refused a message: \(message)"
        case .tooManyOpens(let count): return "the app's open completions kept opening URLs; stopped after \(count)"
        }
    }
}
