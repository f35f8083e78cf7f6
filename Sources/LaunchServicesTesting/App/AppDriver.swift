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
    /// The daemon's own lifecycle machine: it decides what the app is sent and what each
    /// open's caller hears. The driver only carries out its actions.
    private var machine = LaunchStateMachine()
    /// The machine's clock: it never moves (the driver arms no timers).
    private let now: UInt64 = 0
    private var requestTokens = LaunchToken.Counter()
    private var pid: Int32 = 0
    private var launched = false
    private var terminated = false
    /// The app another app's opening sends to the background (`sendToBackground`).
    private static var otherApp: String { "com.example.other-app" }

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

    /// Opens `url` in the app as the daemon would: the daemon's own `LaunchStateMachine`
    /// decides what the app is sent and what the caller hears, so the driver cannot drift
    /// from it. Not running yet (cold): `willFinishLaunching`, `didFinishLaunching` (sent even
    /// after a veto), `didBecomeActive`, then the delivery unless a launch method returned
    /// false. In the background: `willEnterForeground`, `didBecomeActive`, the delivery.
    /// Already active: only the delivery.
    @discardableResult
    public func open(_ url: String, from source: String? = nil, annotation: PropertyListValue? = nil, warning: String? = nil) throws(AppDriverError) -> AppOpenResult {
        guard !terminated else { throw .terminated }
        let parsed: ParsedURL
        do { parsed = try ParsedURL(url) } catch { throw .invalidURL("\(error)") }
        guard schemes.contains(parsed.scheme.normalized) else { throw .schemeNotClaimed(scheme: parsed.scheme.normalized, claimed: schemes) }
        let start = events.count
        let token = requestTokens.take()
        let request = OpenRequest(token: token, url: url, sourceApplication: source ?? sourceApplication, annotation: annotation, warning: warning)
        var run = OpenRun()
        try perform(machine.open(request, app: application.bundleIdentifier, now: now), &run)
        guard let outcome = run.replies[token] else { throw .runtime("the daemon's state machine left the open of \(url) unanswered") }
        return AppOpenResult(url: url, launched: outcome.launched, accepted: run.accepted, method: run.method, vetoedIn: run.vetoedIn,
                             events: Array(events[start...]), outcome: outcome)
    }

    /// Another app comes to the front (the daemon opens one), so an active app resigns and
    /// enters the background, as the daemon's state machine decides. Returns the messages
    /// sent (none when the app is not in the foreground).
    @discardableResult
    public func sendToBackground() throws(AppDriverError) -> [AppEvent] {
        guard !terminated else { throw .terminated }
        let start = events.count
        let token = requestTokens.take()
        let request = OpenRequest(token: token, url: "\(Self.otherApp)://front", sourceApplication: sourceApplication)
        var run = OpenRun()
        try perform(machine.open(request, app: Self.otherApp, now: now), &run)
        return Array(events[start...])
    }

    /// The app comes back to the front without a URL (as when its open is the one in
    /// progress); `open` does this itself. The daemon's state machine moves it there through
    /// an open whose delivery the driver withholds from the app (answered for it), so the
    /// notifications and the state after are the daemon's. Returns the messages sent.
    @discardableResult
    public func bringToForeground() throws(AppDriverError) -> [AppEvent] {
        guard !terminated else { throw .terminated }
        guard launched else { return [] }
        let start = events.count
        let token = requestTokens.take()
        let request = OpenRequest(token: token, url: "\(schemes.first ?? "app")://front", sourceApplication: sourceApplication)
        var run = OpenRun(withholdsDelivery: true)
        try perform(machine.open(request, app: application.bundleIdentifier, now: now), &run)
        return Array(events[start...])
    }

    /// The daemon shuts down and closes the connection: `willTerminate`. Later steps throw
    /// `terminated`. Returns the messages sent (none when the app never launched).
    @discardableResult
    public func terminate() -> [AppEvent] {
        guard launched, !terminated else { return [] }
        terminated = true
        _ = machine.shutdown(now: now)
        application.connectionClosed()
        events.append(.willTerminate)
        return [.willTerminate]
    }

    // MARK: The daemon's part

    /// What one open through the machine came to: the answers to callers by request token,
    /// and how the app answered its phases.
    private struct OpenRun {
        var withholdsDelivery = false
        var replies: [LaunchToken: OpenOutcome] = [:]
        var accepted = false
        var method: DeliveryMethod?
        var vetoedIn: LaunchPhase?
    }

    /// Carries out the machine's actions in order, feeding back the app's answers, as the
    /// daemon's executor does. Timers are never armed: no time passes in the driver. The
    /// other app (`otherApp`) answers every phase with YES and is sent nothing.
    private func perform(_ first: [LaunchStateMachine.Action], _ run: inout OpenRun) throws(AppDriverError) {
        var pending = first[...]
        var steps = 0
        while let action = pending.popFirst() {
            steps += 1
            if steps > 10_000 { throw .runtime("the daemon's state machine did not settle") }
            switch action {
            case .spawn(let app, _):
                pid += 1
                machine.spawned(app: app, pid: pid)
                if app == application.bundleIdentifier {
                    launched = true
                    _ = try send(.welcome(version: Frame.protocolVersion, identity: app), id: 0)
                }
                pending += machine.checkedIn(app: app, now: now)
            case .sendLaunchMethod(let app, let phase, let token, let options):
                var accepted = true
                if app == application.bundleIdentifier {
                    events.append(phase == .willFinishLaunching ? .willFinishLaunching : .didFinishLaunching)
                    (accepted, _) = try phaseResult(.launchMethod(phase, Self.delivery(options)), token: token)
                    if !accepted && run.vetoedIn == nil { run.vetoedIn = phase }
                }
                pending += machine.phaseCompleted(app: app, token: token, accepted: accepted, now: now)
            case .deliver(let app, let token, let request):
                var accepted = true
                var method: DeliveryMethod? = .open
                if app == application.bundleIdentifier && !run.withholdsDelivery {
                    events.append(.openURL)
                    (accepted, method) = try phaseResult(.deliver(Self.delivery(request)), token: token)
                    (run.accepted, run.method) = (accepted, method)
                }
                pending += machine.phaseCompleted(app: app, token: token, accepted: accepted, method: method, now: now)
            case .notify(let app, let notification):
                if app == application.bundleIdentifier { try notify(notification) }
            case .reply(let token, let outcome):
                run.replies[token] = outcome
            case .armDeadline, .armGrace, .armQuitStep, .quitEnded:
                // No time passes in the driver, and nothing asks it to quit an app.
                break
            case .terminate(let app, _, _), .suspend(let app, _), .resume(let app, _), .closeConnection(let app), .askToExit(let app, _), .deliverAtCheckIn(let app, _, _):
                if app == application.bundleIdentifier { throw .runtime("the daemon's state machine asked for \(action), which the driver does not play") }
            }
        }
    }

    /// What the app is told of an open, as the daemon sends it.
    private static func delivery(_ request: OpenRequest) -> Delivery {
        Delivery(url: request.url, sourceApplication: request.sourceApplication, annotation: request.annotation, warning: request.warning)
    }

    private func notify(_ notification: AppNotification) throws(AppDriverError) {
        events.append(AppEvent(notification))
        _ = try send(.notify(notification), id: 0)
    }

    /// Sends a `launchMethod` or `deliver` under the machine's phase token and returns the
    /// app's `phaseResult`.
    private func phaseResult(_ message: Message, token: LaunchToken) throws(AppDriverError) -> (accepted: Bool, method: DeliveryMethod?) {
        guard case .phaseResult(let accepted, let method)? = try send(message, id: token.value) else {
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
