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
    private var nextID: UInt32 = 1

    public init(socketPath: String? = nil, program: String) throws(ClientError) {
        let path = socketPath ?? SocketPath.resolve()
        self.socketPath = path
        connection = try FrameConnection.connect(path: path)
        pendingHello = Frame.encode(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: program)))
    }

    /// Opens a URL and waits for the outcome, bounded by `timeout`.
    public func open(_ url: String, annotation: PropertyListValue? = nil, timeout: Duration = .seconds(60)) throws(ClientError) -> OpenOutcome {
        let reply = try request(.open(url: url, annotation: annotation), waitingFor: "open \(url)", timeout: timeout)
        switch reply {
        case .openResult(let outcome): return outcome
        case .failure(let error): return .failure(error)
        default: throw .protocolViolation("expected openResult, got \(reply.kindName)")
        }
    }

    /// Whether a handler for the URL's scheme exists, and which app it is.
    public func canOpen(_ url: String, timeout: Duration = .seconds(10)) throws(ClientError) -> (canOpen: Bool, app: String?) {
        let reply = try request(.canOpen(url: url), waitingFor: "canOpen \(url)", timeout: timeout)
        switch reply {
        case .canOpenResult(let canOpen, let app): return (canOpen, app)
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected canOpenResult, got \(reply.kindName)")
        }
    }

    /// An inspection: returns the daemon's JSON document.
    public func query(_ topic: String, timeout: Duration = .seconds(10)) throws(ClientError) -> String {
        let reply = try request(.query(topic: topic), waitingFor: "query \(topic)", timeout: timeout)
        switch reply {
        case .queryResult(let json): return json
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected queryResult, got \(reply.kindName)")
        }
    }

    /// An administrative command: returns the daemon's JSON answer.
    public func command(_ verb: String, _ arguments: [String], timeout: Duration = .seconds(30)) throws(ClientError) -> String {
        let reply = try request(.command(verb: verb, arguments: arguments), waitingFor: verb, timeout: timeout)
        switch reply {
        case .queryResult(let json): return json
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected queryResult, got \(reply.kindName)")
        }
    }

    /// Sends one request and waits for the reply with its id.
    public func request(_ message: Message, waitingFor what: String, timeout: Duration) throws(ClientError) -> Message {
        let id = nextID
        nextID &+= 1
        if nextID == 0 { nextID = 1 }
        var bytes = pendingHello ?? []
        pendingHello = nil
        bytes.append(contentsOf: Frame.encode(Envelope(id: id, message)))
        try connection.send(bytes)
        let deadline = ContinuousClock.now + timeout
        while true {
            let envelope: Envelope
            do {
                envelope = try connection.receive(waitingFor: what, deadline: deadline)
            } catch {
                if case .timedOut = error { throw .timedOut(waitingFor: what, after: timeout) }
                throw error
            }
            switch envelope.message {
            case .welcome(_, let identity):
                self.identity = identity
            case .failure(let error) where envelope.id == 0:
                throw .refused(error)
            default:
                if envelope.id == id { return envelope.message }
            }
        }
    }

    public func close() { connection.close() }
}
