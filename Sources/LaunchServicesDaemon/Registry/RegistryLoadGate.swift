import LaunchServicesCore
import LaunchServicesProtocol

/// Requests that arrive while the registry loads after the socket serves
/// (`RegistryService.finishLoading`): each one that needs the registry waits here and is
/// answered, in arrival order, once the registry is in, so its answer is the one the whole
/// registry gives. A client's hello and the user's `status` (answered from the saved counts)
/// pass at once, unless something of the same connection already waits (a connection's
/// requests keep their order). Bounded: past `maximumHeld` a connection is refused, named.
///
/// An open or `canOpen` of the user's that needs one scheme only waits for that scheme's
/// part of the registry (`readAhead`, `RegistryStore.preview(of:)`), which is answered as
/// the whole registry would: once `previewed` says it is in, such requests are answered, each
/// when nothing sent before it on its connection still waits. Confined to the loop.
final class RegistryLoadGate {
    /// About a second of opens at the daemon's best rate; the load takes tens of milliseconds.
    static let maximumHeld = 4096
    /// Schemes read ahead while one load runs; requests for others wait for the load (each
    /// read-ahead scans the apps' rows once).
    static let maximumReadAheads = 16

    enum Decision: Equatable {
        /// Handle it now.
        case pass
        /// Kept; `replay` runs once the registry is in.
        case held
        /// Too many wait already: refuse the connection.
        case full
    }

    private struct Held {
        /// Its connection's serial: an object's identity is given to the next one made
        /// at its address once it is freed (a connection closed while it waits).
        let connection: UInt64
        /// The one scheme it needs, when a read-ahead of it can answer it.
        let scheme: URLScheme?
        let replay: () -> Void
    }

    private(set) var isOpen = true
    private var held: [Held] = []
    /// How many requests wait.
    var heldCount: Int { held.count }
    /// Requests waiting per connection, by serial.
    private var waiting: [UInt64: Int] = [:]
    /// Schemes whose part of the registry is in, and those asked for.
    private var previewed: Set<URLScheme> = []
    private var asked: Set<URLScheme> = []
    /// Set while requests are answered early: their own admission passes.
    private var releasing = false
    /// Asks for a scheme's part of the registry (`RegistryService.readAhead`).
    var readAhead: ((URLScheme) -> Void)?

    /// Whether `envelope` from `connection` may be handled now, or waits.
    func admit(_ envelope: Envelope, from connection: ClientConnection, replay: @escaping () -> Void) -> Decision {
        guard !isOpen, !releasing else { return .pass }
        let key = connection.serial
        let scheme = Self.oneScheme(envelope, connection)
        if waiting[key] == nil {
            if Self.answersWhileLoading(envelope, connection) { return .pass }
            if let scheme, previewed.contains(scheme) { return .pass }
        }
        guard held.count < Self.maximumHeld else { return .full }
        held.append(Held(connection: key, scheme: scheme, replay: replay))
        waiting[key, default: 0] += 1
        if let scheme, asked.count < Self.maximumReadAheads, asked.insert(scheme).inserted { readAhead?(scheme) }
        return .held
    }

    /// What needs no registry: a client's hello, and the user's status query.
    static func answersWhileLoading(_ envelope: Envelope, _ connection: ClientConnection) -> Bool {
        switch envelope.message {
        case .hello(_, .client, _, _, _): !connection.greeted && connection.kind == .socket
        case .query(let topic): connection.greeted && topic == AdminQuery.status.topic && connection.identity == LaunchServicesDaemon.shellIdentity
        default: false
        }
    }

    /// The one scheme a request of the user's needs from the registry, when that is all it
    /// needs: a `canOpen`, or an open that names no app, returns to none and carries no
    /// x-callback parameter (each of those asks about other apps). Nil for anything else.
    static func oneScheme(_ envelope: Envelope, _ connection: ClientConnection) -> URLScheme? {
        guard connection.greeted, connection.identity == LaunchServicesDaemon.shellIdentity else { return nil }
        switch envelope.message {
        case .canOpen(let text):
            return (try? ParsedURL(text))?.scheme
        case .open(let text, _, nil, let options) where options.app == nil:
            guard let url = try? ParsedURL(text) else { return nil }
            // The callback rule resolves each callback's scheme too (`CallbackCheck`).
            if url.rawQuery != nil, url.queryItems().contains(where: { CallbackCheck.callbackParameter($0.name) != nil }) { return nil }
            return url.scheme
        default:
            return nil
        }
    }

    /// `scheme`'s part of the registry is in: each request waiting only for it is answered,
    /// in arrival order, when nothing sent before it on its connection waits any more.
    func previewedScheme(_ scheme: URLScheme) {
        guard !isOpen else { return }
        previewed.insert(scheme)
        var blocked: Set<UInt64> = []
        var ready: [Held] = []
        held.removeAll { entry in
            if !blocked.contains(entry.connection), let needed = entry.scheme, previewed.contains(needed) {
                ready.append(entry)
                return true
            }
            blocked.insert(entry.connection)
            return false
        }
        for entry in ready {
            waiting[entry.connection]! -= 1
            if waiting[entry.connection] == 0 { waiting[entry.connection] = nil }
        }
        releasing = true
        defer { releasing = false }
        for entry in ready { entry.replay() }
    }

    /// From now on requests wait (the start serves before the registry is in).
    func close() { isOpen = false }

    /// Lets everything through and answers what waited, in order; returns how many waited.
    @discardableResult
    func open() -> Int {
        isOpen = true
        let waited = held
        reset()
        for entry in waited { entry.replay() }
        return waited.count
    }

    /// Opens without answering what waited (the daemon stops: those connections close).
    func discard() {
        isOpen = true
        reset()
    }

    private func reset() {
        held = []
        waiting = [:]
        previewed = []
        asked = []
    }
}
