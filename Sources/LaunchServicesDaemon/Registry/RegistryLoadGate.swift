import LaunchServicesProtocol

/// Requests that arrive while the registry loads after the socket serves
/// (`RegistryService.finishLoading`): each one that needs the registry waits here and is
/// answered, in arrival order, once the registry is in, so its answer is the one the whole
/// registry gives. A client's hello and the user's `status` (answered from the saved counts)
/// pass at once, unless something of the same connection already waits (a connection's
/// requests keep their order). Bounded: past `maximumHeld` a connection is refused, named.
/// Confined to the loop.
final class RegistryLoadGate {
    /// About a second of opens at the daemon's best rate; the load takes tens of milliseconds.
    static let maximumHeld = 4096

    enum Decision: Equatable {
        /// Handle it now.
        case pass
        /// Kept; `replay` runs once the registry is in.
        case held
        /// Too many wait already: refuse the connection.
        case full
    }

    private(set) var isOpen = true
    private var replays: [() -> Void] = []
    /// How many requests wait.
    var heldCount: Int { replays.count }
    /// Connections with a request waiting, by identity.
    private var waiting: Set<ObjectIdentifier> = []

    /// Whether `envelope` from `connection` may be handled now, or waits.
    func admit(_ envelope: Envelope, from connection: ClientConnection, replay: @escaping () -> Void) -> Decision {
        guard !isOpen else { return .pass }
        let key = ObjectIdentifier(connection)
        if !waiting.contains(key) && Self.answersWhileLoading(envelope, connection) { return .pass }
        guard replays.count < Self.maximumHeld else { return .full }
        replays.append(replay)
        waiting.insert(key)
        return .held
    }

    /// What needs no registry: a client's hello, and the user's status query.
    static func answersWhileLoading(_ envelope: Envelope, _ connection: ClientConnection) -> Bool {
        switch envelope.message {
        case .hello(_, .client, _, _): !connection.greeted && connection.kind == .socket
        case .query(let topic): connection.greeted && topic == AdminQuery.status.topic && connection.identity == LaunchServicesDaemon.shellIdentity
        default: false
        }
    }

    /// From now on requests wait (the start serves before the registry is in).
    func close() { isOpen = false }

    /// Lets everything through and answers what waited, in order; returns how many waited.
    @discardableResult
    func open() -> Int {
        isOpen = true
        let waited = replays
        replays = []
        waiting = []
        for replay in waited { replay() }
        return waited.count
    }

    /// Opens without answering what waited (the daemon stops: those connections close).
    func discard() {
        isOpen = true
        replays = []
        waiting = []
    }
}
