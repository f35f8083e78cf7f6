import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// Requests as they arrive: the greeting (hello, and which kind of peer may say what), then
/// each request routed to the part that answers it. Opens and canOpenURL are answered here:
/// the URL is checked, the callback rule applied, and the open handed to the machine.
extension LaunchServicesDaemon {
    func received(_ envelope: Envelope, from connection: ClientConnection) {
        loop.assertInEventLoop()
        guard !connection.closing else { return }
        guard !connection.checkingIn else {
            protocolViolation("\(envelope.message.kindName) arrived while the app's check-in is verified; wait for welcome before sending requests", on: connection)
            return
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
            open(url, annotation: annotation, returnTo: returnTo, options: options, id: envelope.id, from: connection)
        case .awaitCallback:
            reserveCallback(id: envelope.id, for: connection)
        case .pasteboard(let request):
            pasteboardService.requested(request, id: envelope.id, from: connection)
        case .canOpen(let url):
            canOpen(url, id: envelope.id, from: connection)
        case .query, .command:
            admin(envelope, from: connection)
        case .phaseResult(let accepted, let method):
            guard let app = connection.appID else {
                protocolViolation("phaseResult comes only from apps the daemon launched", on: connection)
                return
            }
            perform(machine.phaseCompleted(app: app, token: UInt64(envelope.id), accepted: accepted, method: method, now: now))
        case .hello:
            protocolViolation("hello was sent twice", on: connection)
        default:
            protocolViolation("\(envelope.message.kindName) is not a request launchservicesd accepts", on: connection)
        }
    }

    private func greet(_ envelope: Envelope, _ connection: ClientConnection) {
        connection.helloDeadline?.cancel()
        connection.helloDeadline = nil
        guard case .hello(let version, let role, _, let bundlePath) = envelope.message else {
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
            send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: connection.identity)), to: connection)
        case (.app(let id), .app):
            connection.greeted = true
            send(Envelope(id: 0, .welcome(version: Frame.protocolVersion, identity: id)), to: connection)
            perform(machine.checkedIn(app: id, now: now))
        case (.socket, .app) where bundlePath != nil && connection.descendsFromApp:
            connection.closing = true
            logger.warning("app check-in refused: pid \(connection.peerPID ?? 0) was started by \(connection.identity)", metadata: ["bundle_id": "\(connection.identity)"])
            ConnectionTable.refuse(connection.channel, with: OpenError(.notPermitted, "this process was started by \(connection.identity) and speaks as it; it cannot check in as another app"))
        case (.socket, .app) where bundlePath != nil:
            attach(connection, bundlePath: bundlePath!)
        case (.socket, .app):
            connection.closing = true
            ConnectionTable.refuse(connection.channel, with: OpenError(.notPermitted, "an app checks in only on the connection launchservicesd hands it at launch (fd 3); open one of its URLs to launch it"))
        case (.app, .client):
            protocolViolation("a launched app must say hello with role 'app'", on: connection)
        }
    }

    private func open(_ text: String, annotation: PropertyListValue?, returnTo: String?, options: OpenOptions, id: UInt32, from connection: ClientConnection) {
        let url: ParsedURL
        do {
            url = try ParsedURL(text)
        } catch {
            let outcome = OpenOutcome.failure(OpenError(.invalidURL, "invalid URL: \(error)"))
            executor.history.record(source: connection.identity, unparsed: text, outcome)
            send(Envelope(id: id, .openResult(outcome)), to: connection)
            return
        }
        if let token = CallbackAddress.token(of: url) {
            routeCallback(url, token: token, returnTo: returnTo, id: id, from: connection)
            return
        }
        var warning: String?
        if let violation = callbackViolation(url, returnTo: returnTo, from: connection) {
            switch configuration.callbackPolicy {
            case .refuse:
                logger.warning("open refused: \(LogRedaction.redact(violation.message, urls: [violation.url, text]))", metadata: ["url_scheme": "\(url.scheme)", "outcome": "notPermitted", "peer": "\(connection.identity)"])
                var words = violation.parameter == "reply" ? "refused: \(violation.message)" : "refused to open \(TerminalText.quoted(text)): \(violation.message)"
                if connection.identity == Self.shellIdentity, violation.parameter != "reply" {
                    words += "; lsopen owns no URL scheme, so use lsopen --wait to be called back"
                }
                let refusal = OpenOutcome.failure(OpenError(.notPermitted, words + " (callbackPolicy 'refuse')"), app: registry.handler(for: url.scheme)?.id)
                executor.history.record(source: connection.identity, scheme: url.scheme, refusal)
                send(Envelope(id: id, .openResult(refusal)), to: connection)
                return
            case .flag:
                logger.notice("callback flagged: \(LogRedaction.redact(violation.message, urls: [violation.url, text]))", metadata: ["url_scheme": "\(url.scheme)", "peer": "\(connection.identity)"])
                warning = violation.message
            }
        }
        guard let app = chooseApp(for: url, text: text, options: options, id: id, from: connection) else { return }
        let limit = configuration.connectionLimits.maximumPendingRequests
        if connection.waiting.count >= limit {
            limitReached(.pendingRequests, "\(connection.identity) has \(limit) opens waiting on one connection")
            let busy = OpenOutcome.failure(OpenError(.unavailable, "this connection already has \(limit) opens waiting for an answer, the limit (connections.maximumPendingRequests); wait for their answers or use another connection"), app: app.id)
            executor.history.record(source: connection.identity, scheme: url.scheme, busy)
            send(Envelope(id: id, .openResult(busy)), to: connection)
            return
        }
        let token = executor.ledger.begin(.init(connection: connection, id: id, scheme: url.scheme, source: connection.identity, url: text, received: now, app: app.id))
        let request = OpenRequest(token: token, url: text, sourceApplication: connection.identity, annotation: annotation, warning: warning,
                                  caller: connection.serial, background: options.background)
        perform(machine.open(request, app: app.id, now: now))
    }

    /// The app to open in: the one the caller named (it must declare the scheme), else the
    /// scheme's handler. Answers the caller itself when there is none.
    private func chooseApp(for url: ParsedURL, text: String, options: OpenOptions, id: UInt32, from connection: ClientConnection) -> AppBundle? {
        let refusal: String
        if let named = options.app {
            switch registry.choose(named, for: url.scheme) {
            case .chosen(let app):
                return app
            case .notRegistered:
                refusal = "no app with bundle id '\(named)' is registered (see: lsctl apps)"
            case .doesNotDeclare:
                let claimants = registry.resolve(url.scheme)?.claimants ?? []
                refusal = "\(named) does not declare the scheme '\(url.scheme)' in its CFBundleURLTypes; \(claimants.isEmpty ? "no app does" : "apps that do: \(claimants.joined(separator: ", "))")"
            }
        } else if let app = registry.handler(for: url.scheme) {
            return app
        } else {
            refusal = "no app handles the scheme '\(url.scheme)' (URL \(TerminalText.quoted(text))); install an app whose Info.plist declares it in CFBundleURLTypes (see: lsctl apps)"
        }
        logger.info("no handler", metadata: ["url_scheme": "\(url.scheme)", "outcome": "noHandler"])
        let outcome = OpenOutcome.failure(OpenError(.noHandler, refusal), app: options.app)
        executor.history.record(source: connection.identity, scheme: url.scheme, outcome)
        send(Envelope(id: id, .openResult(outcome)), to: connection)
        return nil
    }

    private func canOpen(_ text: String, id: UInt32, from connection: ClientConnection) {
        let url: ParsedURL
        do {
            url = try ParsedURL(text)
        } catch {
            send(Envelope(id: id, .failure(OpenError(.invalidURL, "invalid URL: \(error)"))), to: connection)
            return
        }
        // An app (on its launch connection, or recognised by pid on the socket) may ask only
        // about the schemes it lists in LSApplicationQueriesSchemes (the iOS 9 rule).
        let askingApp = connection.appID ?? (connection.identity == Self.shellIdentity ? nil : connection.identity)
        if let askingApp {
            guard registry.apps[askingApp]?.queriesSchemes.contains(url.scheme) == true else {
                if deniedQueries.insert(askingApp + "\u{0}" + url.scheme.normalized).inserted {
                    logger.warning("canOpenURL denied: '\(url.scheme)' is not in \(askingApp)'s LSApplicationQueriesSchemes; answered false", metadata: ["bundle_id": "\(askingApp)", "url_scheme": "\(url.scheme)"])
                }
                send(Envelope(id: id, .canOpenResult(canOpen: false, app: nil)), to: connection)
                return
            }
        }
        let handler = registry.handler(for: url.scheme)
        send(Envelope(id: id, .canOpenResult(canOpen: handler != nil, app: askingApp == nil ? handler?.id : nil)), to: connection)
    }
}
