import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The registry's administration (`lsctl register`, `unregister`, `default`): each change
/// is written to the database before the in-memory registry (off the loop) and before the
/// answer, so a change the caller was told about survives a crash. Confined to the loop.
final class RegistryCommands {
    typealias Reply = (Message) -> Void

    private let loop: EventLoop
    private let logger: Logger
    private let registry: RegistryService
    private let lifecycle: AppLifecycle

    init(loop: EventLoop, logger: Logger, registry: RegistryService, lifecycle: AppLifecycle) {
        self.loop = loop
        self.logger = logger
        self.registry = registry
        self.lifecycle = lifecycle
    }

    /// Reads the bundle off the loop (its Info.plist is a file the caller chose), then
    /// registers it on the loop. The path must be absolute: the daemon's working directory
    /// means nothing to the caller (lsctl sends an absolute path). It is stored canonical.
    func register(path: String, _ done: @escaping Reply) {
        guard path.hasPrefix("/") else {
            return done(.failure(OpenError(.invalidRequest, "cannot register '\(path)': give the bundle folder's absolute path")))
        }
        let request = NIOLoopBound((self, done), eventLoop: loop)
        registry.files.async {
            // BundleLoader makes the path canonical and bounds what it reads.
            let loaded = Result { () throws(BundleError) -> AppBundle in try BundleLoader.load(bundleAt: path) }
            request.eventLoop.execute {
                let (commands, done) = request.value
                switch loaded {
                case .failure(let error):
                    done(.failure(OpenError(.invalidRequest, "cannot register: \(error)")))
                case .success(let bundle):
                    commands.register(bundle, done)
                }
            }
        }
    }

    private func register(_ bundle: AppBundle, _ done: @escaping Reply) {
        if let existing = registry.registry.apps[bundle.id], existing.path != bundle.path {
            return done(.failure(OpenError(.invalidRequest, "cannot register \(bundle.path): '\(bundle.id)' is already registered from \(existing.path); run lsctl unregister \(bundle.id) first")))
        }
        // Registered again from the same path: the app keeps its time, so its schemes stay.
        let time = registry.registeredAt(bundle.id) ?? registry.issueTime()
        registry.persist({ try $0.save(bundle, source: .manual, registeredAt: time) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot save the registration of \(bundle.id): \(error)")))
            }
            registry.register(bundle, source: .manual, at: time)
            logger.notice("registered \(bundle.id) from \(TerminalText.escapingControls(bundle.path))", metadata: ["bundle_id": "\(bundle.id)"])
            done(.queryResult(json: JSONDocument.encode(RegisterReport(registered: AppReport(bundle), heldByOthers: schemesHeld(from: bundle)))))
        }
    }

    /// The schemes `bundle` declares that open in another app (the user's default, or a
    /// claimant registered earlier): registering never takes a scheme over silently, so the
    /// answer says which ones it did not win and who holds each.
    private func schemesHeld(from bundle: AppBundle) -> [SchemeReport] {
        bundle.schemes.compactMap { scheme in
            guard let resolution = registry.registry.resolve(scheme), resolution.app.id != bundle.id else { return nil }
            return SchemeReport(scheme: scheme.normalized, app: resolution.app.id, reason: resolution.reason.rawValue, claimants: resolution.claimants,
                                claims: resolution.claims.map(ClaimReport.init), kind: resolution.app.kind(of: scheme))
        }
    }

    func unregister(_ id: String, _ done: @escaping Reply) {
        guard registry.registry.apps[id] != nil else {
            return done(.failure(OpenError(.invalidRequest, "no app with bundle id '\(id)' is registered; see lsctl apps")))
        }
        registry.persist({ try $0.delete(id) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot remove the registration of \(id): \(error)")))
            }
            let source = registry.unregister(id)
            logger.notice("unregistered \(id)", metadata: ["bundle_id": "\(id)"])
            var answer = UnregisterReport(unregistered: id)
            if source == .folder { answer.note = "its bundle is in an apps folder: it is registered again when the daemon next scans the folders" }
            // A running app is quit, as lsctl quit would (willTerminate, then SIGTERM and
            // SIGKILL after the grace): the daemon does not keep driving an app it no longer
            // knows, whose scheme now opens elsewhere and whose bundle may be deleted next.
            if let pid = lifecycle.quitIfRunning(id) {
                answer.quitting = pid
                logger.notice("quitting \(id) (pid \(pid)): it was unregistered while running", metadata: ["bundle_id": "\(id)", "pid": "\(pid)"])
            }
            done(.queryResult(json: JSONDocument.encode(answer)))
        }
    }

    /// `lsctl default SCHEME [ID | --clear]`: shows (no `id`, not `clear`), sets or clears
    /// the user's default; answered with the scheme's explanation as it now stands.
    func setDefault(schemeText: String, id: String?, clear: Bool, _ done: @escaping Reply) {
        let scheme: URLScheme
        do {
            scheme = try URLScheme(validating: schemeText)
        } catch {
            return done(.failure(OpenError(.invalidRequest, "\(error)")))
        }
        if id == nil && !clear {
            return done(SchemeExplanation(registry).scheme(scheme, url: nil))
        }
        if let id {
            guard let app = registry.registry.apps[id] else {
                return done(.failure(OpenError(.invalidRequest, "no app with bundle id '\(id)' is registered; see lsctl apps")))
            }
            guard app.schemes.contains(scheme) else {
                let claimants = registry.registry.resolve(scheme)?.claimants ?? []
                return done(.failure(OpenError(.invalidRequest, "\(id) does not declare the scheme '\(scheme)' in its CFBundleURLTypes; \(claimants.isEmpty ? "no app claims it" : "claimants: \(claimants.joined(separator: ", "))")")))
            }
        }
        registry.persist({ try $0.setDefault(id, for: scheme) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot save the default for '\(scheme)': \(error)")))
            }
            let previous = registry.registry.defaults[scheme]
            registry.setDefault(id, for: scheme)
            logger.notice("default handler for '\(scheme)' changed from \(previous ?? "(none)") to \(id ?? "(none)")", metadata: ["url_scheme": "\(scheme)"])
            done(SchemeExplanation(registry).scheme(scheme, url: nil))
        }
    }
}
