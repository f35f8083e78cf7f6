/// `AppDriver`: runs an `ApplicationDelegate` in-process, playing the daemon's part for one
/// app — the launch methods, deliveries and notifications a real daemon would send, in its
/// order — through the same `Application.handle(_:)` the socket runtime uses. No daemon, no
/// sockets, no waiting: every call returns once the delegate has answered.
import LaunchServicesApp
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol

@MainActor
public final class AppDriver<Delegate: ApplicationDelegate> {
    /// The delegate under test (kept alive by the driver).
    public let delegate: Delegate
    /// The `Application` the delegate methods receive.
    public let application: Application
    /// The schemes the app claims (lowercased); `open` refuses others.
    public let schemes: [String]
    /// The caller `open` names as the source application when none is given.
    public var sourceApplication: String
    /// Every message sent to the app so far, in order.
    public private(set) var events: [AppEvent] = []
    /// The pasteboards the app's `AppPasteboard` calls read and change.
    public let pasteboards: MemoryPasteboards

    private let outbound: DriverOutbound
    /// The daemon's phase tokens: the ids of `launchMethod` and `deliver`.
    private var tokens = RequestIDs()
    private var launched = false
    private var terminated = false

    /// A driver for `delegate`, as the app `bundleID` claiming `schemes`. `installedSchemes`
    /// are the schemes `canOpenURL` answers true for (by default the app's own).
    /// `openResponder` answers the app's own opens (by default: opened, by the app it
    /// returns to, if any).
    public init(delegate: Delegate, bundleID: String, schemes: [String], sourceApplication: String = "com.example.caller",
                installedSchemes: Set<String>? = nil, openResponder: @escaping (AppOpenRequest) -> OpenOutcome = { OpenOutcome(app: $0.returnTo, method: .open) }) {
        self.delegate = delegate
        self.schemes = schemes.map { $0.lowercased() }
        self.sourceApplication = sourceApplication
        self.pasteboards = MemoryPasteboards()
        self.outbound = DriverOutbound(installedSchemes: installedSchemes ?? Set(self.schemes), pasteboards: pasteboards, openResponder: openResponder)
        self.application = Application(bundleIdentifier: bundleID, outbound: outbound, delegate: delegate)
    }

    /// The lifecycle state, as the app's runtime tracks it.
    public var state: AppState { application.state }
    /// Every open the app asked for, in order (none is sent anywhere).
    public var opens: [AppOpenRequest] { outbound.opens }
    /// The URLs of the app's returning opens: its x-callback-url replies (x-success,
    /// x-error, x-cancel), in order.
    public var callbacks: [String] { outbound.opens.filter { $0.returnTo != nil }.map(\.url) }
    /// The URLs the app passed to `canOpenURL`, in order.
    public var canOpenQueries: [String] { outbound.canOpenQueries }
    /// The schemes `canOpenURL` answers true for.
    public var installedSchemes: Set<String> {
        get { outbound.installedSchemes }
        set { outbound.installedSchemes = newValue }
    }
    /// Answers the app's opens (the outcome reaches its completion after the delegate method returns).
    public var openResponder: (AppOpenRequest) -> OpenOutcome {
        get { outbound.openResponder }
        set { outbound.openResponder = newValue }
    }

    /// Opens `url` in the app as the daemon would. Not running yet (cold): `willFinishLaunching`,
    /// `didFinishLaunching` (sent even after a veto), `didBecomeActive`, then the delivery
    /// unless a launch method returned false. In the background: `willEnterForeground`,
    /// `didBecomeActive`, the delivery. Already active: only the delivery.
    @discardableResult
    public func open(_ url: String, from source: String? = nil, annotation: PropertyListValue? = nil, warning: String? = nil) throws(AppDriverError) -> AppOpenResult {
        guard !terminated else { throw .terminated }
        let parsed: ParsedURL
        do { parsed = try ParsedURL(url) } catch { throw .invalidURL("\(error)") }
        guard schemes.contains(parsed.scheme.normalized) else { throw .schemeNotClaimed(scheme: parsed.scheme.normalized, claimed: schemes) }
        let delivery = Delivery(url: url, sourceApplication: source ?? sourceApplication, annotation: annotation, warning: warning)
        let start = events.count
        let cold = !launched
        var vetoedIn: LaunchPhase?
        if cold {
            launched = true
            _ = try send(.welcome(version: Frame.protocolVersion, identity: application.bundleIdentifier), id: 0)
            for phase in [LaunchPhase.willFinishLaunching, .didFinishLaunching] {
                let (accepted, _) = try runPhase(.launchMethod(phase, delivery))
                if !accepted && vetoedIn == nil { vetoedIn = phase }
            }
            try notify(.didBecomeActive)
        } else {
            try activate()
        }
        var accepted = false
        var method: DeliveryMethod?
        if vetoedIn == nil {
            (accepted, method) = try runPhase(.deliver(delivery))
        }
        return AppOpenResult(url: url, launched: cold, accepted: accepted, method: method, vetoedIn: vetoedIn, events: Array(events[start...]))
    }

    /// Another app comes to the front: an active app resigns and enters the background.
    /// Returns the messages sent (none when the app is not in the foreground).
    @discardableResult
    public func sendToBackground() throws(AppDriverError) -> [AppEvent] {
        guard !terminated else { throw .terminated }
        let start = events.count
        if state == .active { try notify(.willResignActive) }
        if state == .inactive { try notify(.didEnterBackground) }
        return Array(events[start...])
    }

    /// The app comes back to the front without a URL (as when its open is the one in
    /// progress); `open` does this itself. Returns the messages sent.
    @discardableResult
    public func bringToForeground() throws(AppDriverError) -> [AppEvent] {
        guard !terminated else { throw .terminated }
        guard launched else { return [] }
        let start = events.count
        try activate()
        return Array(events[start...])
    }

    /// The daemon shuts down and closes the connection: `willTerminate`. Later steps throw
    /// `terminated`. Returns the messages sent (none when the app never launched).
    @discardableResult
    public func terminate() -> [AppEvent] {
        guard launched, !terminated else { return [] }
        terminated = true
        application.connectionClosed()
        events.append(.willTerminate)
        return [.willTerminate]
    }

    // MARK: Sending

    private func activate() throws(AppDriverError) {
        if state == .background || state == .suspended { try notify(.willEnterForeground) }
        if state != .active { try notify(.didBecomeActive) }
    }

    private func notify(_ notification: AppNotification) throws(AppDriverError) {
        events.append(AppEvent(notification))
        _ = try send(.notify(notification), id: 0)
    }

    /// Sends a `launchMethod` or `deliver` and returns the app's `phaseResult`.
    private func runPhase(_ message: Message) throws(AppDriverError) -> (accepted: Bool, method: DeliveryMethod?) {
        switch message {
        case .launchMethod(let phase, _): events.append(phase == .willFinishLaunching ? .willFinishLaunching : .didFinishLaunching)
        default: events.append(.openURL)
        }
        guard case .phaseResult(let accepted, let method)? = try send(message, id: tokens.take()) else {
            throw .runtime("no phaseResult for \(message.kindName)")
        }
        return (accepted, method)
    }

    /// Hands one message to the app's runtime, then answers the opens the app made meanwhile
    /// (their completions run after the delegate method returned, as on the socket).
    private func send(_ message: Message, id: UInt32) throws(AppDriverError) -> Message? {
        let reply: Message?
        do { reply = try application.handle(Envelope(id: id, message)) } catch { throw .runtime("\(error)") }
        try answerOpens()
        return reply
    }

    private func answerOpens() throws(AppDriverError) {
        var answered = 0
        while !outbound.pending.isEmpty {
            let (id, request) = outbound.pending.removeFirst()
            answered += 1
            if answered > 1000 { throw .tooManyOpens(answered) }
            do { _ = try application.handle(Envelope(id: id, .openResult(outbound.openResponder(request)))) } catch { throw .runtime("\(error)") }
        }
    }
}
