import LaunchServicesCore
import LaunchServicesProtocol
import Logging

/// A callback address a caller reserved: where a callback to it is delivered.
struct CallbackReservation {
    let connection: ClientConnection
    /// The `awaitCallback` request id; the `callback` message carries it.
    let id: UInt32
}

/// Returning control (x-callback-url): checking the callbacks a request names, and delivering
/// callbacks to callers that own no scheme (`lsopen --wait`).
extension LaunchServicesDaemon {
    /// Reserves `x-lsopen-callback://TOKEN` for this connection. The token is 128 random
    /// bits, so no one can guess another caller's address. The limit is per connection
    /// only: with connections capped per uid, all reservations together stay bounded, and
    /// no daemon-wide pool exists for one caller to drain.
    func reserveCallback(id: UInt32, for connection: ClientConnection) {
        let limit = configuration.connectionLimits.maximumCallbackAddresses
        guard connection.reservations.count < limit else {
            limitReached(.callbackAddresses, "\(connection.identity) holds \(limit) callback addresses on one connection")
            send(Envelope(id: id, .failure(OpenError(.unavailable, "this connection already waits on \(limit) callback addresses, the limit (connections.maximumCallbackAddresses); wait for their callbacks first"))), to: connection)
            return
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        reservations[token] = CallbackReservation(connection: connection, id: id)
        connection.reservations.insert(token)
        send(Envelope(id: id, .callbackAddress(url: CallbackAddress.base(token: token))), to: connection)
    }

    /// The callback rule for an open from `connection`: its x-success/x-error/x-cancel must
    /// open in itself, and a returning open (`returnTo`) must open in exactly that app.
    func callbackViolation(_ url: ParsedURL, returnTo: String?, from connection: ClientConnection) -> CallbackViolation? {
        let check = CallbackCheck(
            handler: { [registry] in registry.handler(for: $0)?.id },
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
    func routeCallback(_ url: ParsedURL, token: String, returnTo: String?, id: UInt32, from connection: ClientConnection) {
        guard let reservation = reservations[token] else {
            let gone = OpenOutcome.failure(OpenError(.noHandler,
                "nobody waits at \(CallbackAddress.base(token: token)): the caller that reserved it has gone, or was already called back"))
            executor.history.record(source: connection.identity, scheme: url.scheme, gone)
            send(Envelope(id: id, .openResult(gone)), to: connection)
            return
        }
        if let returnTo, returnTo != reservation.connection.identity {
            let refusal = OpenOutcome.failure(OpenError(.notPermitted, "refused to open \(TerminalText.quoted(url.string)): the callback address belongs to \(reservation.connection.identity), not to \(returnTo)"))
            executor.history.record(source: connection.identity, scheme: url.scheme, refusal)
            send(Envelope(id: id, .openResult(refusal)), to: connection)
            return
        }
        reservations[token] = nil
        reservation.connection.reservations.remove(token)
        logger.info("callback from \(connection.identity) delivered to a waiting \(reservation.connection.identity)", metadata: ["bundle_id": "\(connection.identity)", "outcome": "callback"])
        send(Envelope(id: reservation.id, .callback(url: url.string, sourceApplication: connection.identity)), to: reservation.connection)
        let delivered = OpenOutcome(app: reservation.connection.identity)
        executor.history.record(source: connection.identity, scheme: url.scheme, delivered)
        send(Envelope(id: id, .openResult(delivered)), to: connection)
    }
}
