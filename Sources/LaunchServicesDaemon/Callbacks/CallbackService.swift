import LaunchServicesCore
import LaunchServicesProtocol
import Logging

/// A callback address a caller reserved: where a callback to it is delivered.
struct CallbackReservation {
    let connection: ClientConnection
    /// The `awaitCallback` request id; the `callback` message carries it.
    let id: UInt32
}

/// Returning control (x-callback-url): checking the callbacks a request names, and
/// delivering callbacks to callers that own no scheme (`lsopen --wait`), whose addresses
/// this room reserves and owns. Confined to the loop.
final class CallbackService {
    private let limits: ConnectionLimits
    private let logger: Logger
    private let registry: RegistryService
    private let connections: ConnectionTable
    private let records: OpenRecords
    /// Callback addresses reserved by callers that own no scheme, by token.
    private var reservations: [String: CallbackReservation] = [:]

    init(limits: ConnectionLimits, logger: Logger, registry: RegistryService, connections: ConnectionTable, records: OpenRecords) {
        self.limits = limits
        self.logger = logger
        self.registry = registry
        self.connections = connections
        self.records = records
    }

    /// Reserves `x-lsopen-callback://TOKEN` for this connection. The token is 128 random
    /// bits, so no one can guess another caller's address. The limit is per connection
    /// only: with connections capped per uid, all reservations together stay bounded, and
    /// no daemon-wide pool exists for one caller to drain.
    func reserve(id: UInt32, for connection: ClientConnection) {
        let limit = limits.maximumCallbackAddresses
        guard connection.reservations.count < limit else {
            connections.limitReached(.callbackAddresses, "\(connection.identity) holds \(limit) callback addresses on one connection")
            connections.send(Envelope(id: id, .failure(OpenError(.unavailable, "this connection already waits on \(limit) callback addresses, the limit (connections.maximumCallbackAddresses); wait for their callbacks first"))), to: connection)
            return
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        reservations[token] = CallbackReservation(connection: connection, id: id)
        connection.reservations.insert(token)
        connections.send(Envelope(id: id, .callbackAddress(url: CallbackAddress.base(token: token))), to: connection)
    }

    /// The connection's addresses are no longer served: it closed, or it finished sending
    /// (an address is for a caller that is still listening).
    func release(_ connection: ClientConnection) {
        for token in connection.reservations { reservations[token] = nil }
        connection.reservations.removeAll()
    }

    /// The callback rule for an open from `connection`: its x-success/x-error/x-cancel must
    /// open in itself, and a returning open (`returnTo`) must open in exactly that app.
    func violation(_ url: ParsedURL, returnTo: String?, from connection: ClientConnection) -> CallbackViolation? {
        // Nothing to check: making the check (two closures, the registry captured) cost
        // more than the rule itself, on every open of a URL without a query.
        guard returnTo != nil || CallbackCheck.mayCarryCallbacks(url) else { return nil }
        let check = CallbackCheck(
            handler: { [registry = registry.registry] in registry.handler(for: $0)?.id },
            reservationOwner: { [reservations] token in
                guard let reservation = reservations[token] else { return nil }
                // A request may name only its own connection's addresses; a reply may name
                // any address whose owner it returns to.
                if returnTo == nil, reservation.connection !== connection { return "another caller" }
                return reservation.connection.identity
            })
        if let violation = check.checkRequest(url, source: connection.identity) { return violation }
        if let returnTo { return check.check(url.string, returningTo: returnTo, parameter: "reply") }
        return nil
    }

    /// Someone opened a reserved address: hand the URL to the waiting caller, once.
    func route(_ url: ParsedURL, token: String, returnTo: String?, id: UInt32, from connection: ClientConnection) {
        guard let reservation = reservations[token] else {
            let gone = OpenOutcome.failure(OpenError(.noHandler,
                "nobody waits at \(CallbackAddress.base(token: token)): the caller that reserved it has gone, or was already called back"))
            return records.answerAtOnce(gone, id: id, scheme: url.scheme, to: connection)
        }
        if let returnTo, returnTo != reservation.connection.identity {
            let refusal = OpenOutcome.failure(OpenError(.notPermitted, "refused to open \(TerminalText.quoted(url.string)): the callback address belongs to \(reservation.connection.identity), not to \(returnTo)"))
            return records.answerAtOnce(refusal, id: id, scheme: url.scheme, to: connection)
        }
        reservations[token] = nil
        reservation.connection.reservations.remove(token)
        logger.info("callback from \(connection.identity) delivered to a waiting \(reservation.connection.identity)", metadata: ["bundle_id": "\(connection.identity)", "outcome": "callback"])
        connections.send(Envelope(id: reservation.id, .callback(url: url.string, sourceApplication: connection.identity)), to: reservation.connection)
        records.answerAtOnce(OpenOutcome(app: reservation.connection.identity), id: id, scheme: url.scheme, to: connection)
    }
}
