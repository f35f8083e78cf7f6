import LaunchServicesCore

/// Who opens a scheme now, over both kinds: the registry's native apps and the desktop
/// entries room's choice, put together by `SchemeResolution` (the one rule). This only
/// gathers the rule's inputs, on the loop, cheaply on the open path: one lookup per side,
/// and the whole desktop choice only when the user's default names a desktop entry that is
/// not the chosen one.
struct SchemeHandlers {
    let registry: RegistryService
    let desktop: DesktopService

    /// Whether the answer for `scheme` could change once the desktop entries' first read is
    /// in: reading is on and not done, and something besides the native apps may matter
    /// (no native handler, a desktop claim kept from an earlier start, or a default that
    /// names no native app).
    func awaitsDesktop(_ scheme: URLScheme, named: String? = nil) -> Bool {
        guard desktop.settings.enabled, !desktop.isReady, !desktop.isStopped else { return false }
        let apps = registry.registry
        if let named { return apps.apps[named] == nil }
        if let chosen = apps.defaults[scheme], apps.apps[chosen] == nil { return true }
        return apps.handler(for: scheme) == nil || registry.desktopClaims[scheme] != nil
    }

    /// The handler of `scheme`, or nil when no app of either kind handles it.
    func handler(for scheme: URLScheme) -> SchemeResolution.Handler? {
        let apps = registry.registry
        let chosen = desktop.settings.enabled ? desktop.chosen(for: scheme) : nil
        let defaultID = apps.defaults.isEmpty ? nil : apps.defaults[scheme]
        let defaultIsDesktop = defaultID.map { apps.apps[$0] == nil } ?? false
        // The hot path: no desktop entry handles the scheme, so only native apps can.
        if chosen == nil, !defaultIsDesktop {
            return apps.handler(for: scheme).map { .native($0) }
        }
        return resolution(for: scheme)?.handler
    }

    /// The whole resolution (every claim, the reason), or nil when nobody handles `scheme`.
    func resolution(for scheme: URLScheme) -> SchemeResolution? {
        guard desktop.settings.enabled else { return registry.resolve(scheme, desktop: nil) }
        let apps = registry.registry
        let chosen = desktop.chosen(for: scheme)
        var named: DesktopCandidate?
        if let defaultID = apps.defaults[scheme], apps.apps[defaultID] == nil {
            named = defaultID == chosen?.id ? chosen : desktop.choice(forScheme: scheme.normalized).usable(defaultID)
        }
        let side = SchemeResolution.DesktopSide(chosen: chosen, since: registry.desktopClaims[scheme], userDefault: named)
        return SchemeResolution.resolve(scheme, registry: apps, desktop: side, now: registry.wallClock())
    }

    /// The outcome of naming `id` for `scheme` (`lsopen --app`): a native app that declares
    /// it, a desktop entry that is a usable handler of it, or why neither.
    func named(_ id: String, for scheme: URLScheme) -> Result<SchemeResolution.Handler, NamedHandlerRefusal> {
        let apps = registry.registry
        switch apps.choose(id, for: scheme) {
        case .chosen(let app):
            return .success(.native(app))
        case .doesNotDeclare:
            let claimants = apps.resolve(scheme)?.claimants ?? []
            return .failure(NamedHandlerRefusal("\(id) does not declare the scheme '\(scheme)' in its CFBundleURLTypes; \(claimants.isEmpty ? "no app does" : "apps that do: \(claimants.joined(separator: ", "))")"))
        case .notRegistered:
            break
        }
        guard desktop.settings.enabled else {
            return .failure(NamedHandlerRefusal("no app with bundle id '\(id)' is registered (see: lsctl apps); desktop entries are off (desktopEntries.enabled)"))
        }
        let choice = desktop.choice(forScheme: scheme.normalized)
        if let candidate = choice.usable(id) { return .success(.desktop(candidate)) }
        if let lost = choice.candidates.first(where: { $0.id == id }), case .lost(let reason) = lost.verdict {
            return .failure(NamedHandlerRefusal("the desktop entry \(TerminalText.escapingControls(id)) cannot open '\(scheme)': \(reason) (see: lsctl explain)"))
        }
        return .failure(NamedHandlerRefusal("no app with bundle id '\(id)' is registered, and no desktop entry '\(TerminalText.escapingControls(id))' handles the scheme '\(scheme)' (see: lsctl apps, lsctl explain)"))
    }
}

/// Why the app a caller named cannot open its URL, for the caller.
struct NamedHandlerRefusal: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
