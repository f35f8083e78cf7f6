import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Requests as they arrive: the greeting (hello, and which kind of peer may say what), then
/// each request routed to the room that answers it.
extension ConnectionService {
    func received(_ envelope: Envelope, from connection: ClientConnection) {
        loop.assertInEventLoop()
        guard !connection.closing else { return }
        guard !connection.checkingIn else {
            protocolViolation("\(envelope.message.kindName) arrived while the app's check-in is verified; wait for welcome before sending requests", on: connection)
            return
        }
        // While the registry loads after the socket serves, what needs it waits (`RegistryLoadGate`).
        // Asked only while it is closed: an open gate passes everything, and the replay
        // closure (which holds the envelope) cost an allocation and copies per request.
        if !admin.registry.loadGate.isOpen {
            switch admin.registry.loadGate.admit(envelope, from: connection, replay: { [unowned self] in
                guard connection.channel.isActive else { return }
                received(envelope, from: connection)
                // Answered outside a read: nothing else writes it out at the end of this tick.
                connections.flushAtEndOfTick()
            }) {
            case .pass: break
            case .held: return
            case .full:
                connection.closing = true
                ConnectionTable.refuse(connection.channel, with: OpenError(.unavailable, "launchservicesd is still loading its registry and holds \(RegistryLoadGate.maximumHeld) requests already; try again"))
                return
            }
        }
        guard connection.greeted else {
            greet(envelope, connection)
            return
        }
        if envelope.id == 0, envelope.message.isRequest {
            protocolViolation("\(envelope.message.kindName) has request id 0; request ids start at 1 (id 0 marks one-way and connection-level messages)", on: connection)
            return
        }
        switch envelope.message {
        case .open(let url, let annotation, let returnTo, let options):
            opening.open(url, annotation: annotation, returnTo: returnTo, options: options, id: envelope.id, from: connection)
        case .awaitCallback:
            callbacks.reserve(id: envelope.id, for: connection)
        case .pasteboard(let request):
            pasteboards.requested(request, id: envelope.id, from: connection)
        case .canOpen(let url):
            opening.canOpen(url, id: envelope.id, from: connection)
        case .query, .command:
            admin.received(envelope, from: connection)
        case .phaseResult(let accepted, let method):
            guard let app = connection.appID else {
                protocolViolation("phaseResult comes only from apps the daemon launched", on: connection)
                return
            }
            // Its id is the token of the phase it answers. Id 0 answers no phase: like a
            // phase already over, it changes nothing.
            guard let token = LaunchToken(requestID: envelope.id) else { return }
            lifecycle.event { $0.phaseCompleted(app: app, token: token, accepted: accepted, method: method, now: $1) }
        case .hello:
            protocolViolation("hello was sent twice", on: connection)
        default:
            protocolViolation("\(envelope.message.kindName) is not a request launchservicesd accepts", on: connection)
        }
    }

    private func greet(_ envelope: Envelope, _ connection: ClientConnection) {
        connection.helloDeadline?.cancel()
        connection.helloDeadline = nil
        guard case .hello(let version, let role, _, let bundlePath, let dropsVetoedLaunchDelivery) = envelope.message else {
            protocolViolation("the first message must be hello, not \(envelope.message.kindName)", on: connection)
            return
        }
        guard version == Frame.protocolVersion else {
            protocolViolation("protocol version \(version) is not supported; this launchservicesd speaks version \(Frame.protocolVersion)", on: connection)
            return
        }
        switch (connection.kind, role) {
        case (.socket, .client):
            connection.greeted = true
            connections.send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: connection.identity)), to: connection)
        case (.app(let id), .app):
            connection.greeted = true
            // A launch whose launch methods were written at spawn wrote the welcome first.
            if !lifecycle.welcomedAtSpawn(id) {
                connections.send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: id)), to: connection)
            }
            lifecycle.event { $0.checkedIn(app: id, now: $1, dropsVetoedDelivery: dropsVetoedLaunchDelivery) }
        case (.socket, .app) where bundlePath != nil && connection.descendsFromApp:
            connection.closing = true
            logger.warning("app check-in refused: pid \(connection.peerPID ?? 0) was started by \(connection.identity)", metadata: ["bundle_id": "\(connection.identity)"])
            ConnectionTable.refuse(connection.channel, with: OpenError(.notPermitted, "this process was started by \(connection.identity) and speaks as it; it cannot check in as another app"))
        case (.socket, .app) where bundlePath != nil:
            checkIn.attach(connection, bundlePath: bundlePath!)
        case (.socket, .app):
            connection.closing = true
            ConnectionTable.refuse(connection.channel, with: OpenError(.notPermitted, "an app checks in only on the connection launchservicesd hands it at launch (fd 3); open one of its URLs to launch it"))
        case (.app, .client):
            protocolViolation("a launched app must say hello with role 'app'", on: connection)
        }
    }
}
