import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The opening room: an open request as it arrives (the URL checked, the callback rule
/// applied, the app chosen, the caller's limit met) handed to the lifecycle, and
/// canOpenURL answered. What it decides itself (no handler, a refusal) it answers at once.
/// Confined to the loop.
final class OpenService {
    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let registry: RegistryService
    private let connections: ConnectionTable
    private let records: OpenRecords
    private let callbacks: CallbackService
    private let lifecycle: AppLifecycle
    private let handlers: SchemeHandlers
    private let desktopOpening: DesktopOpening
    /// canOpenURL denials already logged (app and scheme), so each is logged once.
    private var deniedQueries: Set<String> = []

    init(configuration: DaemonConfiguration, logger: Logger, registry: RegistryService, connections: ConnectionTable, records: OpenRecords,
         callbacks: CallbackService, lifecycle: AppLifecycle, handlers: SchemeHandlers, desktopOpening: DesktopOpening) {
        self.handlers = handlers
        self.desktopOpening = desktopOpening
        self.configuration = configuration
        self.logger = logger
        self.registry = registry
        self.connections = connections
        self.records = records
        self.callbacks = callbacks
        self.lifecycle = lifecycle
    }

    func open(_ text: String, annotation: PropertyListValue?, returnTo: String?, options: OpenOptions, id: UInt32, from connection: ClientConnection) {
        let url: ParsedURL
        do {
            url = try ParsedURL(text)
        } catch {
            let outcome = OpenOutcome.failure(OpenError(.invalidURL, "invalid URL: \(error)"))
            records.history.record(source: connection.identity, via: connection.via, unparsed: text, outcome)
            connections.send(Envelope(id: id, .openResult(outcome)), to: connection)
            return
        }
        if let token = CallbackAddress.token(of: url) {
            callbacks.route(url, token: token, returnTo: returnTo, id: id, from: connection)
            return
        }
        var warning: String?
        if let violation = callbacks.violation(url, returnTo: returnTo, from: connection) {
            switch configuration.callbackPolicy {
            case .refuse:
                logger.warning("open refused: \(LogRedaction.redact(violation.message, urls: [violation.url, text]))", metadata: ["url_scheme": "\(url.scheme)", "outcome": "notPermitted", "peer": "\(connection.identity)"])
                var words = violation.parameter == "reply" ? "refused: \(violation.message)" : "refused to open \(TerminalText.quoted(text)): \(violation.message)"
                if connection.identity == LaunchServicesDaemon.shellIdentity, violation.parameter != "reply" {
                    words += "; lsopen owns no URL scheme, so use lsopen --wait to be called back"
                }
                let refusal = OpenOutcome.failure(OpenError(.notPermitted, words + " (callbackPolicy 'refuse')"), app: registry.registry.handler(for: url.scheme)?.id)
                return records.answerAtOnce(refusal, id: id, scheme: url.scheme, to: connection)
            case .flag:
                logger.notice("callback flagged: \(LogRedaction.redact(violation.message, urls: [violation.url, text]))", metadata: ["url_scheme": "\(url.scheme)", "peer": "\(connection.identity)"])
                warning = violation.message
            }
        }
        let received = lifecycle.now
        guard handlers.awaitsDesktop(url.scheme, named: options.app) else {
            return openChecked(url, text: text, annotation: annotation, warning: warning, options: options, id: id, received: received, from: connection)
        }
        // The desktop entries' first read may change the answer: this open waits for it (the
        // start only; bounded in time and number, `DesktopService.whenReady`).
        do {
            try handlers.desktop.whenReady { [self] in
                openChecked(url, text: text, annotation: annotation, warning: warning, options: options, id: id, received: received, from: connection)
            }
        } catch {
            records.answerAtOnce(OpenOutcome.failure(OpenError(.unavailable, "\(error)")), id: id, scheme: url.scheme, to: connection)
        }
    }

    /// The rest of an open, once its URL passed the callback rule: the app chosen, the
    /// caller's limit met, then handed to the lifecycle (a native app) or launched (a
    /// desktop app).
    private func openChecked(_ url: ParsedURL, text: String, annotation: PropertyListValue?, warning: String?, options: OpenOptions, id: UInt32, received: UInt64,
                             from connection: ClientConnection) {
        guard let handler = chooseApp(for: url, text: text, options: options, id: id, from: connection) else { return }
        let limit = configuration.connectionLimits.maximumPendingRequests
        if connection.waiting.count >= limit {
            connections.limitReached(.pendingRequests, "\(connection.identity) has \(limit) opens waiting on one connection")
            var busy = OpenOutcome.failure(OpenError(.unavailable, "this connection already has \(limit) opens waiting for an answer, the limit (connections.maximumPendingRequests); wait for their answers or use another connection"), app: handler.id)
            busy.handlerKind = handler.kind
            return records.answerAtOnce(busy, id: id, scheme: url.scheme, to: connection)
        }
        switch handler {
        case .native(let app):
            // The event's closure captures the id alone, not the bundle it was read from.
            let appID = app.id
            let token = records.ledger.begin(.init(connection: connection, id: id, scheme: url.scheme, source: connection.identity, url: text, received: received,
                                                   app: appID, kind: .native))
            let request = OpenRequest(token: token, url: text, sourceApplication: connection.identity, annotation: annotation, warning: warning,
                                      caller: connection.serial, background: options.background)
            lifecycle.event { $0.open(request, app: appID, now: $1) }
        case .desktop(let candidate):
            if options.background {
                var refusal = OpenOutcome.failure(OpenError(.invalidRequest, "\(TerminalText.escapingControls(candidate.id)) is a desktop app, which cannot be opened without coming to the front (--background applies only to apps on this package's runtime); open without --background"), app: candidate.id)
                refusal.handlerKind = .desktop
                return records.answerAtOnce(refusal, id: id, scheme: url.scheme, to: connection)
            }
            let token = records.ledger.begin(.init(connection: connection, id: id, scheme: url.scheme, source: connection.identity, url: text, received: received,
                                                   app: candidate.id, kind: .desktop))
            desktopOpening.open(text, in: candidate, token: token)
        }
    }

    /// The app to open in: the one the caller named (a native app that declares the scheme,
    /// or a desktop entry that handles it), else the scheme's handler of either kind.
    /// Answers the caller itself when there is none.
    private func chooseApp(for url: ParsedURL, text: String, options: OpenOptions, id: UInt32, from connection: ClientConnection) -> SchemeResolution.Handler? {
        let refusal: String
        if let named = options.app {
            switch handlers.named(named, for: url.scheme) {
            case .success(let handler): return handler
            case .failure(let reason): refusal = reason.description
            }
        } else if let handler = handlers.handler(for: url.scheme) {
            return handler
        } else {
            refusal = "no app handles the scheme '\(url.scheme)' (URL \(TerminalText.quoted(text))); install an app whose Info.plist declares it in CFBundleURLTypes, or a desktop entry whose MimeType lists x-scheme-handler/\(url.scheme) (see: lsctl apps, lsctl explain)"
        }
        logger.info("no handler", metadata: ["url_scheme": "\(url.scheme)", "outcome": "noHandler"])
        records.answerAtOnce(OpenOutcome.failure(OpenError(.noHandler, refusal), app: options.app), id: id, scheme: url.scheme, to: connection)
        return nil
    }

    /// Of `tokens`, the desktop opens still being launched (see `DesktopOpening.owed`).
    func launchesOwed(among tokens: Set<LaunchToken>) -> Set<LaunchToken> { desktopOpening.owed(among: tokens) }

    func canOpen(_ text: String, id: UInt32, from connection: ClientConnection) {
        let url: ParsedURL
        do {
            url = try ParsedURL(text)
        } catch {
            connections.send(Envelope(id: id, .failure(OpenError(.invalidURL, "invalid URL: \(error)"))), to: connection)
            return
        }
        let registry = registry.registry
        // An app (on its launch connection, or recognised by pid on the socket) may ask only
        // about the schemes it lists in LSApplicationQueriesSchemes (the iOS 9 rule).
        let askingApp = connection.appID ?? (connection.identity == LaunchServicesDaemon.shellIdentity ? nil : connection.identity)
        if let askingApp {
            guard registry.apps[askingApp]?.mayQuery(url.scheme) == true else {
                if deniedQueries.insert(askingApp + "\u{0}" + url.scheme.normalized).inserted {
                    logger.warning("canOpenURL denied: '\(url.scheme)' is not in \(askingApp)'s LSApplicationQueriesSchemes; answered false", metadata: ["bundle_id": "\(askingApp)", "url_scheme": "\(url.scheme)"])
                }
                connections.send(Envelope(id: id, .canOpenResult(canOpen: false, app: nil)), to: connection)
                return
            }
        }
        let answer = { [self] in
            let handler = handlers.handler(for: url.scheme)
            connections.send(Envelope(id: id, .canOpenResult(canOpen: handler != nil, app: askingApp == nil ? handler?.id : nil)), to: connection)
        }
        guard handlers.awaitsDesktop(url.scheme) else { return answer() }
        do {
            try handlers.desktop.whenReady {
                answer()
                self.connections.flushAtEndOfTick()
            }
        } catch {
            connections.send(Envelope(id: id, .failure(OpenError(.unavailable, "\(error)"))), to: connection)
        }
    }
}
