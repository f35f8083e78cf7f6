#if canImport(Glibc)
import Glibc
#endif
import CLaunchServicesShim
import LaunchServicesClient
import LaunchServicesProtocol

/// The app's side of Launch Services, after iOS's `UIApplication`: one per process.
///
/// `Application.main(delegate:)` checks in with the daemon over the connection the daemon
/// handed the process (fd 3, named by `LAUNCHSERVICES_APP_FD`), then runs a single-threaded
/// loop: each phase the daemon sends becomes one delegate call, and its answer goes back.
@MainActor
public final class Application {
    /// The app's bundle identifier, as the daemon knows it.
    public private(set) var bundleIdentifier: String
    /// The lifecycle state as the daemon last told it.
    public private(set) var state: AppState = .launching

    /// Records which default delivery methods ran, to tell the daemon which one handled a URL.
    struct DeliveryTrace {
        var modernIsDefault = false
        var legacyIsDefault = false
    }
    var deliveryTrace = DeliveryTrace()

    private let connection: FrameConnection
    private weak var delegate: (any ApplicationDelegate)?
    private var ids = RequestIDs()
    private var openCompletions: [UInt32: (OpenOutcome) -> Void] = [:]
    /// Messages that arrived while a synchronous call waited for its own reply.
    /// Frames that arrived while a synchronous call waited, handled by the run loop next.
    private var deferred = SetAsideFrames(maximum: 256)

    /// The environment variable naming the descriptor the daemon passed.
    public static let descriptorVariable = "LAUNCHSERVICES_APP_FD"
    public static let bundleVariable = "LAUNCHSERVICES_BUNDLE_ID"

    init(bundleIdentifier: String, connection: FrameConnection) {
        self.bundleIdentifier = bundleIdentifier
        self.connection = connection
    }

    /// Runs the app until the daemon closes its connection. Never returns.
    ///
    /// Launched by the daemon, the app checks in on fd 3. Started by hand, it connects to
    /// the daemon's socket and declares its bundle (the folder its executable was started
    /// from); the daemon checks that this process really runs that bundle's executable.
    public static func main(delegate: some ApplicationDelegate) -> Never {
        let application: Application
        if let fdText = getenv(descriptorVariable).map({ String(cString: $0) }), let fd = Int32(fdText) {
            // Launched by the daemon: die with it. The daemon armed SIGKILL before exec;
            // this arms it again because the kernel drops the setting when it execs a
            // set-user-ID or file-capability binary. SIGKILL, not SIGTERM: once the daemon
            // is gone nothing can drive the app, a suspended app would keep SIGTERM pending
            // forever, and the graceful end is the daemon's own shutdown, which closes our
            // connection (`run` then calls willTerminate and exits).
            if let daemon = getenv("LAUNCHSERVICES_DAEMON_PID").flatMap({ Int32(String(cString: $0)) }), ls_die_with_parent(SIGKILL, daemon) != 0 {
                exit(0)
            }
            let bundleID = getenv(bundleVariable).map { String(cString: $0) } ?? "unknown"
            application = Application(bundleIdentifier: bundleID, connection: FrameConnection(fd: fd))
        } else {
            let executable = CommandLine.arguments.first ?? ""
            let bundlePath = executable.contains("/") ? String(executable[..<executable.lastIndex(of: "/")!]) : "."
            let absolute = bundlePath.hasPrefix("/") ? bundlePath : currentDirectory() + "/" + bundlePath
            do {
                application = Application(bundleIdentifier: "unknown", connection: try FrameConnection.connect(path: SocketPath.resolve()))
            } catch {
                StandardStreams.error("\(executable): \(error)\n")
                exit(69)
            }
            application.declaredBundlePath = absolute
        }
        application.delegate = delegate
        application.run()
    }

    /// Set when the app was started by hand and declares itself in its hello.
    private var declaredBundlePath: String?

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        let length = buffer.firstIndex(of: 0) ?? 0
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Asking the daemon

    /// Whether some app opens `url`'s scheme. Like iOS 9+, an app may ask only about schemes
    /// in its `LSApplicationQueriesSchemes`; others answer false (and the daemon logs it).
    public func canOpenURL(_ url: String) -> Bool {
        guard let reply = try? call(.canOpen(url: url), waitingFor: "canOpenURL \(url)", timeout: .seconds(10)) else { return false }
        if case .canOpenResult(let canOpen, _) = reply { return canOpen }
        return false
    }

    /// Asks the daemon to open `url`. The outcome arrives later, on this loop, in
    /// `completion` (iOS's `open(_:options:completionHandler:)`), so an app can open
    /// another app from inside any delegate method without blocking.
    ///
    /// `returningTo` marks an open that returns control to that app (a reply to a request it
    /// sent): the daemon then opens the URL only if it opens in exactly that app, so a caller
    /// that lied about its callback cannot hand control to a third app.
    public func open(_ url: String, annotation: PropertyListValue? = nil, returningTo: String? = nil, completion: ((OpenOutcome) -> Void)? = nil) {
        let id = ids.take()
        if let completion { openCompletions[id] = completion }
        do {
            try connection.send(Envelope(id: id, .open(url: url, annotation: annotation, returnTo: returningTo)))
        } catch {
            openCompletions[id] = nil
            completion?(.failure(OpenError(.daemonUnreachable, "\(error)")))
        }
    }

    /// Copies to, pastes from or clears a pasteboard (see `pasteboard(named:)`), waiting for
    /// the daemon's answer.
    public func pasteboard(_ request: PasteboardRequest) throws(ClientError) -> PasteboardSnapshot {
        let reply = try call(.pasteboard(request), waitingFor: "pasteboard \(request.operation.rawValue)", timeout: .seconds(10))
        switch reply {
        case .pasteboardResult(let snapshot): return snapshot
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected pasteboardResult, got \(reply.kindName)")
        }
    }

    /// While `open(_:url:sourceApplication:annotation:)` runs: the daemon's warning that the
    /// URL's callbacks do not return to its sender (only under the `flag` callback policy).
    public private(set) var currentDeliveryWarning: String?

    // MARK: The loop

    private func run() -> Never {
        do {
            try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .app, program: bundleIdentifier, bundlePath: declaredBundlePath)))
            while true {
                let envelope: Envelope
                if let kept = deferred.removeFirst() {
                    envelope = kept
                } else {
                    envelope = try connection.receive(waitingFor: "the next event", deadline: nil)
                }
                try dispatch(envelope)
            }
        } catch {
            if case .connectionClosed = error {
                state = .notRunning
                delegate?.willTerminate(self)
                exit(0)
            }
            StandardStreams.error("\(bundleIdentifier): \(error)\n")
            exit(70)
        }
    }

    private func dispatch(_ envelope: Envelope) throws(ClientError) {
        guard let delegate else { return }
        switch envelope.message {
        case .launchMethod(let phase, let delivery):
            let options = LaunchOptions(urlString: delivery.url, sourceApplication: delivery.sourceApplication, annotation: delivery.annotation)
            let accepted = phase == .willFinishLaunching
                ? delegate.willFinishLaunching(self, options: options)
                : delegate.didFinishLaunching(self, options: options)
            try connection.send(Envelope(id: envelope.id, .phaseResult(accepted: accepted, method: nil)))
        case .deliver(let delivery):
            deliveryTrace = DeliveryTrace()
            var accepted = false
            currentDeliveryWarning = delivery.warning
            if let url = try? ParsedURL(delivery.url) {
                accepted = delegate.open(self, url: url, sourceApplication: delivery.sourceApplication, annotation: delivery.annotation)
            }
            currentDeliveryWarning = nil
            let method: DeliveryMethod = !deliveryTrace.modernIsDefault ? .open : (!deliveryTrace.legacyIsDefault ? .handleOpen : .none)
            try connection.send(Envelope(id: envelope.id, .phaseResult(accepted: accepted, method: method)))
        case .notify(let notification):
            switch notification {
            case .didBecomeActive:
                state = .active
                delegate.didBecomeActive(self)
            case .willResignActive:
                state = .inactive
                delegate.willResignActive(self)
            case .didEnterBackground:
                state = .background
                delegate.didEnterBackground(self)
            case .willEnterForeground:
                state = .inactive
                delegate.willEnterForeground(self)
            }
        case .openResult(let outcome):
            openCompletions.removeValue(forKey: envelope.id)?(outcome)
        case .failure(let error):
            if envelope.id == 0 { throw .refused(error) }
            openCompletions.removeValue(forKey: envelope.id)?(.failure(error))
        case .welcome(_, let identity):
            bundleIdentifier = identity
            if declaredBundlePath != nil { state = .background }
        case .canOpenResult, .queryResult, .callbackAddress, .callback, .pasteboardResult:
            break
        case .hello, .open, .canOpen, .query, .command, .phaseResult, .awaitCallback, .pasteboard:
            throw .protocolViolation("the daemon sent an app-to-daemon message (\(envelope.message.kindName))")
        }
    }

    /// A synchronous request: waits for its reply, setting aside whatever else arrives.
    private func call(_ message: Message, waitingFor what: String, timeout: Duration) throws(ClientError) -> Message {
        let id = ids.take()
        try connection.send(Envelope(id: id, message))
        let deadline = ContinuousClock.now + timeout
        while true {
            let envelope = try connection.receive(waitingFor: what, deadline: deadline)
            if envelope.id == id, !envelope.message.isDaemonCommand { return envelope.message }
            try deferred.append(envelope)
        }
    }

}

extension Message {
    /// Daemon-initiated messages, whose ids are the daemon's, not replies to the app.
    var isDaemonCommand: Bool {
        switch self {
        case .launchMethod, .deliver, .notify: return true
        default: return false
        }
    }
}
