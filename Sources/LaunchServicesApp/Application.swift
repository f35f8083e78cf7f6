import LaunchServicesClient
import LaunchServicesProtocol

/// The app's side of Launch Services, after iOS's `UIApplication`: one per process.
///
/// `Application.main(delegate:)` (SocketRuntime.swift) checks in with the daemon and runs the
/// loop; what each message from the daemon does to the delegate is decided in one place,
/// `handle(_:)` (ApplicationDispatch.swift); what the app asks of the daemon goes through an
/// `ApplicationOutbound` (frames on the socket, or the testing kit's in-memory stand-in).
@MainActor
public final class Application {
    /// The app's bundle identifier, as the daemon knows it.
    public internal(set) var bundleIdentifier: String
    /// The lifecycle state as the daemon last told it.
    public internal(set) var state: AppState = .launching

    /// Records which default delivery methods ran, to tell the daemon which one handled a URL.
    struct DeliveryTrace {
        var modernIsDefault = false
        var legacyIsDefault = false
    }
    var deliveryTrace = DeliveryTrace()
    /// A launch method said NO: the launch's own delivery (`Delivery.ofLaunch`), which the
    /// daemon may have written before reading that answer, is dropped unanswered.
    var launchVetoed = false

    let outbound: any ApplicationOutbound
    weak var delegate: (any ApplicationDelegate)?
    var openCompletions: [UInt32: (OpenOutcome) -> Void] = [:]
    /// Set when the app was started by hand and declares itself in its hello: the daemon
    /// then sends no launch methods, and the app starts in the background.
    var declaredBundlePath: String?

    /// The environment variable naming the descriptor the daemon passed.
    public static let descriptorVariable = "LAUNCHSERVICES_APP_FD"
    public static let bundleVariable = "LAUNCHSERVICES_BUNDLE_ID"

    /// An application whose requests go to `outbound` and whose incoming messages (given to
    /// `handle(_:)`) drive `delegate`, which it does not keep alive.
    package init(bundleIdentifier: String, outbound: any ApplicationOutbound, delegate: (any ApplicationDelegate)?) {
        self.bundleIdentifier = bundleIdentifier
        self.outbound = outbound
        self.delegate = delegate
    }

    // MARK: Asking the daemon

    /// Whether some app opens `url`'s scheme. Like iOS 9+, an app may ask only about schemes
    /// in its `LSApplicationQueriesSchemes`; others answer false (and the daemon logs it).
    public func canOpenURL(_ url: String) -> Bool {
        (try? outbound.canOpen(url: url)) ?? false
    }

    /// Asks the daemon to open `url`. The outcome arrives later, on this loop, in
    /// `completion` (iOS's `open(_:options:completionHandler:)`), so an app can open
    /// another app from inside any delegate method without blocking.
    ///
    /// `returningTo` marks an open that returns control to that app (a reply to a request it
    /// sent): the daemon then opens the URL only if it opens in exactly that app, so a caller
    /// that lied about its callback cannot hand control to a third app.
    public func open(_ url: String, annotation: PropertyListValue? = nil, returningTo: String? = nil, completion: ((OpenOutcome) -> Void)? = nil) {
        do {
            let id = try outbound.sendOpen(url: url, annotation: annotation, returnTo: returningTo)
            // The outcome can only arrive through the loop, after this returns.
            if let completion { openCompletions[id] = completion }
        } catch {
            completion?(.failure(OpenError(.daemonUnreachable, "\(error)")))
        }
    }

    /// Copies to, pastes from or clears a pasteboard (see `pasteboard(named:)`), waiting for
    /// the daemon's answer.
    public func pasteboard(_ request: PasteboardRequest) throws(ClientError) -> PasteboardSnapshot {
        try outbound.pasteboard(request)
    }

    /// While `open(_:url:sourceApplication:annotation:)` runs: the daemon's warning that the
    /// URL's callbacks do not return to its sender (only under the `flag` callback policy).
    public internal(set) var currentDeliveryWarning: String?

    /// While `open(_:url:sourceApplication:annotation:)` runs: the URL was opened in the
    /// background (the caller asked the daemon not to bring the app to the front).
    public internal(set) var openedInBackground = false
}
