import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The registry's administration (`lsctl register`, `unregister`, `default`): each change
/// is written to the database before the in-memory registry (off the loop) and before the
/// answer, so a change the caller was told about survives a crash. A default may name an app
/// that declares the scheme or a desktop entry that can open it (asked of `desktop`).
/// Confined to the loop.
final class RegistryCommands {
    typealias Reply = (Message) -> Void

    private let loop: EventLoop
    private let logger: Logger
    private let registry: RegistryService
    private let lifecycle: AppLifecycle
    private let desktop: DesktopService?

    init(loop: EventLoop, logger: Logger, registry: RegistryService, lifecycle: AppLifecycle, desktop: DesktopService?) {
        self.loop = loop
        self.logger = logger
        self.registry = registry
        self.lifecycle = lifecycle
        self.desktop = desktop
    }

    private var explanation: SchemeExplanation { SchemeExplanation(registry, desktop: desktop) }

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

    /// The schemes `bundle` declares that open in another handler (the user's default, an
    /// app registered earlier, or desktop entries that handled it first): registering never
    /// takes a scheme over silently, so the answer says which ones it did not win and who
    /// holds each.
    private func schemesHeld(from bundle: AppBundle) -> [SchemeReport] {
        let explanation = explanation
        return bundle.schemes.compactMap { scheme in
            guard let row = explanation.row(scheme), row.app != bundle.id || row.handlerKind != SchemeResolution.Kind.native.rawValue else { return nil }
            return row
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
            return done(explanation.scheme(scheme, url: nil))
        }
        if let id, let refusal = refusal(ofDefault: id, for: scheme) {
            return done(.failure(OpenError(.invalidRequest, refusal)))
        }
        registry.persist({ try $0.setDefault(id, for: scheme) }) { [self] error in
            if let error {
                return done(.failure(OpenError(.unavailable, "cannot save the default for '\(scheme)': \(error)")))
            }
            let previous = registry.registry.defaults[scheme]
            registry.setDefault(id, for: scheme)
            logger.notice("default handler for '\(scheme)' changed from \(previous ?? "(none)") to \(id ?? "(none)")", metadata: ["url_scheme": "\(scheme)"])
            done(explanation.scheme(scheme, url: nil))
        }
    }

    /// Why `id` cannot be the default for `scheme`, or nil when it can: an app that declares
    /// the scheme, or a desktop entry that can open it (the one the desktop rules choose, or
    /// one they rank after it; the rule looks for the app first, as `SchemeResolution` does).
    private func refusal(ofDefault id: String, for scheme: URLScheme) -> String? {
        let app = registry.registry.apps[id]
        if let app, app.schemes.contains(scheme) { return nil }
        let choice = explanation.desktopChoice(scheme)
        if choice?.usable(id) != nil { return nil }
        let claimants = explanation.row(scheme)?.claimants ?? []
        let handlers = claimants.isEmpty ? "no app or desktop entry can open it" : "those that can: \(claimants.joined(separator: ", "))"
        if app != nil {
            return "\(id) does not declare the scheme '\(scheme)' in its CFBundleURLTypes; \(handlers)"
        }
        guard let desktop, let choice else {
            if id.hasSuffix(".desktop") {
                return "no app with bundle id '\(id)' is registered, and desktop entries are not read (desktopEntries.enabled is false), so no desktop entry can be a default; \(handlers)"
            }
            return "no app with bundle id '\(id)' is registered; see lsctl apps"
        }
        // A candidate that lost: the reason it lost, and the line that made it a candidate.
        if let lost = choice.candidates.first(where: { $0.id == id }), case .lost(let reason) = lost.verdict {
            return "the desktop entry \(id) cannot open '\(scheme)': \(reason) (\(lost.source)); \(handlers)"
        }
        let layout = desktop.handlers.layout
        // Not a candidate: its file (the first folder's with the ID) cannot be a handler at
        // all, or does not name the type.
        if let file = layout.folders.lazy.compactMap({ $0.entries[id] }).first {
            if let defect = DesktopEntryCheck.glibDefect(file, programs: layout.programs, searchPath: layout.searchPath)
                ?? DesktopEntryCheck.extraDefect(file, rules: desktop.handlers.rules) {
                return "the desktop entry \(id) (\(file.path)) cannot open '\(scheme)': \(defect); \(handlers)"
            }
            return "the desktop entry \(id) (\(file.path)) does not handle \(choice.mimeType): neither its MimeType nor a mimeapps.list associates it with the type; \(handlers)"
        }
        if id.hasSuffix(".desktop") {
            return "no desktop entry \(id) in the applications folders (lsctl status lists them), and no app with that bundle id is registered; \(handlers)"
        }
        return "no app with bundle id '\(id)' is registered, and no desktop entry has that ID; see lsctl apps and lsctl explain \(scheme):"
    }
}
