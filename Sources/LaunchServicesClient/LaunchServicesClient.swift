import LaunchServicesCore
import LaunchServicesProtocol

/// A connection to launchservicesd for tools: `lsopen`, `lsctl`, scripts, tests.
///
/// The hello is not awaited on its own: it goes out in the same write as the first request,
/// so an open costs one round trip.
public final class LaunchServicesClient {
    public let socketPath: String
    public let connection: FrameConnection
    /// The `sourceApplication` the daemon assigned to this connection (known after the first reply).
    public private(set) var identity: String?
    private var pendingHello: [UInt8]?
    private var ids = RequestIDs()
    /// Frames that arrived while waiting for another reply (a callback can come before the
    /// open that caused it is answered), kept for whoever waits for them.
    private var stash = SetAsideFrames(maximum: 64)
    /// At most this many set-aside frames; more is a misbehaving daemon.

    public init(socketPath: String? = nil, program: String) throws(ClientError) {
        let path = socketPath ?? SocketPath.resolve()
        self.socketPath = path
        connection = try FrameConnection.connect(path: path)
        pendingHello = Frame.encode(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: program)))
    }

    /// Opens a URL and waits for the outcome, bounded by `timeout`.
    public func open(_ url: String, annotation: PropertyListValue? = nil, options: OpenOptions = OpenOptions(), timeout: Duration = .seconds(60)) throws(ClientError) -> OpenOutcome {
        let reply = try request(.open(url: url, annotation: annotation, options: options), waitingFor: "open \(TerminalText.quoted(url))", timeout: timeout)
        switch reply {
        case .openResult(let outcome): return outcome
        case .failure(let error): return .failure(error)
        default: throw .protocolViolation("expected openResult, got \(reply.kindName)")
        }
    }

    /// Whether a handler for the URL's scheme exists, and which app it is.
    public func canOpen(_ url: String, timeout: Duration = .seconds(10)) throws(ClientError) -> (canOpen: Bool, app: String?) {
        let reply = try request(.canOpen(url: url), waitingFor: "canOpen \(TerminalText.quoted(url))", timeout: timeout)
        switch reply {
        case .canOpenResult(let canOpen, let app): return (canOpen, app)
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected canOpenResult, got \(reply.kindName)")
        }
    }

    /// Reserves a callback address (`x-lsopen-callback://TOKEN`) for this connection; returns
    /// it and the id under which the callback will arrive (`waitForCallback`).
    public func reserveCallback(timeout: Duration = .seconds(10)) throws(ClientError) -> (id: UInt32, address: String) {
        let id = ids.next
        let reply = try request(.awaitCallback, waitingFor: "a callback address", timeout: timeout)
        switch reply {
        case .callbackAddress(let url): return (id, url)
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected callbackAddress, got \(reply.kindName)")
        }
    }

    /// Waits for the callback reserved under `id`: the URL opened and who opened it.
    public func waitForCallback(id: UInt32, until deadline: ContinuousClock.Instant) throws(ClientError) -> (url: String, sourceApplication: String) {
        while true {
            let envelope = try next(waitingFor: "the callback", deadline: deadline)
            if envelope.id == id, case .callback(let url, let source) = envelope.message { return (url, source) }
            if envelope.id == id, case .failure(let error) = envelope.message { throw .refused(error) }
        }
    }

    /// Copies to, pastes from or clears a pasteboard.
    public func pasteboard(_ pasteboardRequest: PasteboardRequest, timeout: Duration = .seconds(10)) throws(ClientError) -> PasteboardSnapshot {
        let reply = try request(.pasteboard(pasteboardRequest), waitingFor: "pasteboard \(pasteboardRequest.operation.rawValue)", timeout: timeout)
        switch reply {
        case .pasteboardResult(let snapshot): return snapshot
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected pasteboardResult, got \(reply.kindName)")
        }
    }

    /// An inspection by its topic on the wire (prefer `query(_: AdminQuery)`): returns the
    /// daemon's JSON document.
    public func query(_ topic: String, timeout: Duration = .seconds(10)) throws(ClientError) -> String {
        let reply = try request(.query(topic: topic), waitingFor: "query \(topic)", timeout: timeout)
        switch reply {
        case .queryResult(let json): return json
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected queryResult, got \(reply.kindName)")
        }
    }

    /// An administrative command by its wire verb and arguments (prefer
    /// `command(_: AdminCommand)`): returns the daemon's JSON answer.
    public func command(_ verb: String, _ arguments: [String], timeout: Duration = .seconds(30)) throws(ClientError) -> String {
        let reply = try request(.command(verb: verb, arguments: arguments), waitingFor: verb, timeout: timeout)
        switch reply {
        case .queryResult(let json): return json
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected queryResult, got \(reply.kindName)")
        }
    }

    /// An inspection (`AdminQuery`): returns the daemon's JSON document, the report type the
    /// query names (AdminReports.swift).
    public func query(_ query: AdminQuery, timeout: Duration = .seconds(10)) throws(ClientError) -> String {
        try self.query(query.topic, timeout: timeout)
    }

    /// An administrative command (`AdminCommand`): returns the daemon's JSON answer.
    public func command(_ command: AdminCommand, timeout: Duration = .seconds(30)) throws(ClientError) -> String {
        try self.command(command.verb, command.arguments, timeout: timeout)
    }

    /// A test-only hook (`DebugHook`), refused unless the daemon allows it.
    public func debug(_ hook: DebugHook, timeout: Duration = .seconds(10)) throws(ClientError) -> String {
        try self.query(hook.topic, timeout: timeout)
    }

    /// Sends one request and waits for the reply with its id.
    /// `what` is said only in an error, so it is built only then.
    public func request(_ message: Message, waitingFor what: @autoclosure () -> String, timeout: Duration) throws(ClientError) -> Message {
        let id = ids.take()
        let frame = Frame.encode(Envelope(id: id, message))
        if let hello = pendingHello {
            pendingHello = nil
            try connection.send(hello + frame)
        } else {
            try connection.send(frame)
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            let envelope: Envelope
            do {
                envelope = try next(waitingFor: what(), deadline: deadline, skippingStash: true)
            } catch {
                if case .timedOut = error { throw .timedOut(waitingFor: what(), after: timeout) }
                throw error
            }
            if envelope.id == id, !envelope.message.isCallback { return envelope.message }
            try stash.append(envelope)
        }
    }

    /// The next frame: set-aside ones first (unless skipped), then the connection's. The
    /// connection-level ones (welcome, failure with id 0) are handled here.
    private func next(waitingFor what: @autoclosure () -> String, deadline: ContinuousClock.Instant, skippingStash: Bool = false) throws(ClientError) -> Envelope {
        if !skippingStash, let kept = stash.removeFirst() { return kept }
        while true {
            let envelope = try connection.receive(waitingFor: what(), deadline: deadline)
            switch envelope.message {
            case .welcome(_, let identity):
                self.identity = identity
            case .failure(let error) where envelope.id == 0:
                throw .refused(error)
            default:
                return envelope
            }
        }
    }

    public func close() { connection.close() }
}

extension Message {
    /// A callback is never the reply to the request that shares its id: it follows the
    /// `callbackAddress` reply, under the same id.
    var isCallback: Bool {
        if case .callback = self { return true }
        return false
    }
}
