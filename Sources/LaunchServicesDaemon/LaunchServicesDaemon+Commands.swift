import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The commands (`AdminCommand`: `lsctl register`, `unregister`, `default`, `explain`,
/// `rescan`): the registry's administration. Each change is written to the database before
/// the in-memory registry (off the loop) and before the answer, so a change the caller was
/// told about survives a crash.
extension LaunchServicesDaemon {
    /// Runs a command and sends its answer under `id`: at once, or once the work done off
    /// the loop is over (`register` reads a bundle, `rescan` the apps folders).
    func execute(_ command: AdminCommand, id: UInt32, from connection: ClientConnection) {
        loop.assertInEventLoop()
        let reply: (Message) -> Void = { [self] answer in
            send(Envelope(id: id, answer), to: connection)
            flushPending()
        }
        if let refusal = refusal(of: command.adminVerb, from: connection) { return reply(refusal) }
        switch command {
        case .register(let path):
            register(path: path, reply)
        case .unregister(let bundleID):
            unregister(bundleID, reply)
        case .showDefault(let scheme):
            setDefault(schemeText: scheme, id: nil, clear: false, reply)
        case .setDefault(let scheme, let app):
            setDefault(schemeText: scheme, id: app, clear: false, reply)
        case .clearDefault(let scheme):
            setDefault(schemeText: scheme, id: nil, clear: true, reply)
        case .explain(let url):
            reply(explain(url, visible: visibleSchemes(for: connection)))
        case .rescan:
            registryService.rescan { [self] summary in
                send(Envelope(id: id, .queryResult(json: JSONDocument.encode(summary))), to: connection)
                flushPending()
            }
        case .quit(let app):
            quit(app, id: id, from: connection, reply)
        }
    }

    /// `quit ID`: the machine answers whether there is anything to quit and ends the app step
    /// by step; the caller is answered when the machine says the quit ended (`quitEnded`).
    private func quit(_ app: String, id: UInt32, from connection: ClientConnection, _ reply: (Message) -> Void) {
        let pid: Int32
        switch machine.quitAnswer(for: app) {
        case .notRunning where registry.apps[app] == nil:
            return reply(.failure(OpenError(.invalidRequest, "no app with bundle id '\(app)' is registered; see lsctl apps")))
        case .notRunning:
            return reply(.failure(OpenError(.invalidRequest, "\(app) is not running; see lsctl running")))
        case .stopping:
            return reply(.failure(OpenError(.unavailable, "launchservicesd is shutting down; \(app) ends with it")))
        case .quits(let running), .alreadyQuitting(let running):
            pid = running
        }
        let limit = configuration.connectionLimits.maximumPendingRequests
        guard executor.quitWaiters[app, default: []].count < limit else {
            return reply(.failure(OpenError(.unavailable, "\(limit) callers already wait for \(app) to quit, the limit (connections.maximumPendingRequests); wait for their answers")))
        }
        executor.quitWaiters[app, default: []].append(QuitWaiter(connection: connection, id: id, pid: pid, started: now))
        perform(machine.quit(app: app, grace: configuration.shutdownGrace, now: now))
        flushPending()
    }

    /// Registering, unregistering and defaults change which app opens what for every caller:
    /// the user's tools may, an app may not (it could unregister a rival, register itself,
    /// or make itself the default). The refusal for an app, or `nil` when the caller may.
    func refusal(of verb: AdminVerb, from connection: ClientConnection) -> Message? {
        guard verb.userOnly, connection.appID != nil || connection.identity != Self.shellIdentity else { return nil }
        switch verb {
        case .register, .unregister:
            return .failure(OpenError(.notPermitted, "\(connection.identity) is an app; only the user registers and unregisters apps (lsctl register PATH, lsctl unregister ID)"))
        default:
            return .failure(OpenError(.notPermitted, "\(connection.identity) is an app; only the user sets default handlers (lsctl default SCHEME BUNDLE-ID)"))
        }
    }

    /// Reads the bundle off the loop (its Info.plist is a file the caller chose), then
    /// registers it on the loop. The path must be absolute: the daemon's working directory
    /// means nothing to the caller (lsctl sends an absolute path). It is stored canonical.
    private func register(path: String, _ done: @escaping (Message) -> Void) {
        guard path.hasPrefix("/") else {
            return done(.failure(OpenError(.invalidRequest, "cannot register '\(path)': give the bundle folder's absolute path")))
        }
        let request = NIOLoopBound((self, done), eventLoop: loop)
        registryService.files.async {
            // BundleLoader makes the path canonical and bounds what it reads.
            let loaded = Result { () throws(BundleError) -> AppBundle in try BundleLoader.load(bundleAt: path) }
            request.eventLoop.execute {
                let (daemon, done) = request.value
                switch loaded {
                case .failure(let error):
                    done(.failure(OpenError(.invalidRequest, "cannot register: \(error)")))
                case .success(let bundle):
                    daemon.register(bundle, done)
                }
            }
        }
    }

    private func register(_ bundle: AppBundle, _ done: @escaping (Message) -> Void) {
        if let existing = registry.apps[bundle.id], existing.path != bundle.path {
            return done(.failure(OpenError(.invalidRequest, "cannot register \(bundle.path): '\(bundle.id)' is already registered from \(existing.path); run lsctl unregister \(bundle.id) first")))
        }
        // Registered again from the same path: the app keeps its time, so its schemes stay.
        let time = registryService.registeredAt(bundle.id) ?? registryService.issueTime()
        registryService.persist({ try $0.save(bundle, source: .manual, registeredAt: time) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot save the registration of \(bundle.id): \(error)")))
            }
            registryService.register(bundle, source: .manual, at: time)
            logger.notice("registered \(bundle.id) from \(TerminalText.escapingControls(bundle.path))", metadata: ["bundle_id": "\(bundle.id)"])
            done(.queryResult(json: JSONDocument.encode(RegisterReport(registered: AppReport(bundle), heldByOthers: schemesHeld(from: bundle)))))
        }
    }

    /// The schemes `bundle` declares that open in another app (the user's default, or a
    /// claimant registered earlier): registering never takes a scheme over silently, so the
    /// answer says which ones it did not win and who holds each.
    private func schemesHeld(from bundle: AppBundle) -> [SchemeReport] {
        bundle.schemes.compactMap { scheme in
            guard let resolution = registry.resolve(scheme), resolution.app.id != bundle.id else { return nil }
            return SchemeReport(scheme: scheme.normalized, app: resolution.app.id, reason: resolution.reason.rawValue, claimants: resolution.claimants,
                                claims: resolution.claims.map(ClaimReport.init), kind: resolution.app.kind(of: scheme))
        }
    }

    private func unregister(_ id: String, _ done: @escaping (Message) -> Void) {
        guard registry.apps[id] != nil else {
            return done(.failure(OpenError(.invalidRequest, "no app with bundle id '\(id)' is registered; see lsctl apps")))
        }
        registryService.persist({ try $0.delete(id) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot remove the registration of \(id): \(error)")))
            }
            let source = registryService.unregister(id)
            logger.notice("unregistered \(id)", metadata: ["bundle_id": "\(id)"])
            var answer = UnregisterReport(unregistered: id)
            if source == .folder { answer.note = "its bundle is in an apps folder: it is registered again when the daemon next scans the folders" }
            // A running app is quit, as lsctl quit would (willTerminate, then SIGTERM and
            // SIGKILL after the grace): the daemon does not keep driving an app it no longer
            // knows, whose scheme now opens elsewhere and whose bundle may be deleted next.
            if case .quits(let pid) = machine.quitAnswer(for: id) {
                answer.quitting = pid
                logger.notice("quitting \(id) (pid \(pid)): it was unregistered while running", metadata: ["bundle_id": "\(id)", "pid": "\(pid)"])
                perform(machine.quit(app: id, grace: configuration.shutdownGrace, now: now))
                flushPending()
            }
            done(.queryResult(json: JSONDocument.encode(answer)))
        }
    }

    private func setDefault(schemeText: String, id: String?, clear: Bool, _ done: @escaping (Message) -> Void) {
        let scheme: URLScheme
        do {
            scheme = try URLScheme(validating: schemeText)
        } catch {
            return done(.failure(OpenError(.invalidRequest, "\(error)")))
        }
        if id == nil && !clear {
            return done(explainScheme(scheme, url: nil))
        }
        if let id {
            guard let app = registry.apps[id] else {
                return done(.failure(OpenError(.invalidRequest, "no app with bundle id '\(id)' is registered; see lsctl apps")))
            }
            guard app.schemes.contains(scheme) else {
                let claimants = registry.resolve(scheme)?.claimants ?? []
                return done(.failure(OpenError(.invalidRequest, "\(id) does not declare the scheme '\(scheme)' in its CFBundleURLTypes; \(claimants.isEmpty ? "no app claims it" : "claimants: \(claimants.joined(separator: ", "))")")))
            }
        }
        registryService.persist({ try $0.setDefault(id, for: scheme) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot save the default for '\(scheme)': \(error)")))
            }
            let previous = registry.defaults[scheme]
            registryService.setDefault(id, for: scheme)
            logger.notice("default handler for '\(scheme)' changed from \(previous ?? "(none)") to \(id ?? "(none)")", metadata: ["url_scheme": "\(scheme)"])
            done(explainScheme(scheme, url: nil))
        }
    }

    private func explain(_ text: String, visible: Set<URLScheme>?) -> Message {
        do {
            let scheme = try ParsedURL(text).scheme
            // An app learns only about the schemes it may query (LSApplicationQueriesSchemes).
            guard visible?.contains(scheme) ?? true else {
                return .failure(OpenError(.notPermitted, "'\(scheme)' is not in this app's LSApplicationQueriesSchemes, so it may not ask about it"))
            }
            return explainScheme(scheme, url: text, showRefused: visible == nil)
        } catch {
            return .failure(OpenError(.invalidURL, "invalid URL: \(error)"))
        }
    }

    /// `showRefused`: name the refused bundles that declare the scheme (the user's tools
    /// only; an app learns no bundle paths).
    private func explainScheme(_ scheme: URLScheme, url: String?, showRefused: Bool = true) -> Message {
        let userDefault = registry.defaults[scheme]
        let refusedClaims = showRefused ? registryService.refused.filter { $0.declaredSchemes.contains(scheme) }.map {
            RefusedClaimReport(path: TerminalText.escapingControls($0.path), reason: TerminalText.escapingControls(($0.key.map { "\($0) " } ?? "") + $0.problem))
        } : []
        guard let resolution = registry.resolve(scheme) else {
            var why = "no registered app declares '\(scheme)' in its CFBundleURLTypes"
            if let first = refusedClaims.first {
                why += refusedClaims.count == 1
                    ? "; the bundle \(first.path) declares it but was refused: \(first.reason)"
                    : "; \(refusedClaims.count) bundles declare it but were refused (see refusedClaims; lsctl status lists why)"
                why += "; fix the bundle, then lsctl rescan"
            }
            return .queryResult(json: JSONDocument.encode(ExplainReport(
                url: url ?? "\(scheme):", scheme: scheme.normalized, app: nil, reason: "noHandler",
                why: why, claimants: [], userDefault: userDefault, refusedClaims: refusedClaims)))
        }
        let why: String
        switch resolution.reason {
        case .userDefault: why = "the user chose \(resolution.app.id) for '\(scheme)' (lsctl default)"
        case .onlyClaimant: why = "\(resolution.app.id) is the only app that declares '\(scheme)'"
        case .earliestRegistration:
            let since = resolution.claims.first.map { ClaimTime.iso8601($0.since) } ?? "?"
            let tie = resolution.claims.count > 1 && resolution.claims[0].since == resolution.claims[1].since
            why = "\(resolution.claimants.count) apps declare '\(scheme)' and no default is set: \(resolution.app.id) was registered first (\(since))"
                + (tie ? ", with the smallest bundle id of those registered then" : "")
                + "; lsctl default \(scheme) BUNDLE-ID to choose another"
        }
        return .queryResult(json: JSONDocument.encode(ExplainReport(
            url: url ?? "\(scheme):", scheme: scheme.normalized, app: resolution.app.id, reason: resolution.reason.rawValue,
            why: why, claimants: resolution.claimants, userDefault: userDefault, claims: resolution.claims.map(ClaimReport.init),
            kind: resolution.app.kind(of: scheme), refusedClaims: refusedClaims)))
    }
}
