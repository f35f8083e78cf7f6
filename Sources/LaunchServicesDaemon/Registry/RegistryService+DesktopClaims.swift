import LaunchServicesCore
import LaunchServicesProtocol

/// The desktop side's claims: when the daemon first saw a desktop entry handle each scheme.
/// With the native apps' registration times they decide a scheme both kinds serve
/// (`SchemeResolution`): the earlier claim keeps it, so neither kind installed later takes a
/// scheme silently.
extension RegistryService {
    /// The schemes desktop entries handle now (after a read of the desktop folders): each one
    /// new claims now, with one time for the read (as one folder scan shares a time); each
    /// one no longer handled is forgotten. Saved first (off the loop), then taken in memory;
    /// a failed save is logged and the claims still hold until the daemon stops.
    func desktopHandlersChanged(handled: Set<URLScheme>, then done: @escaping () -> Void = {}) {
        let gone = desktopClaims.keys.filter { !handled.contains($0) }
        let new = handled.filter { desktopClaims[$0] == nil }
        guard !gone.isEmpty || !new.isEmpty else { return done() }
        let time = issueTime()
        let seen = Dictionary(uniqueKeysWithValues: new.map { ($0, time) })
        persist({ try $0.updateDesktopClaims(seen: seen, gone: gone) }) { [self] error in
            if let error {
                logger.warning("could not save when desktop entries first handled \(seen.count + gone.count) schemes: \(error); the times hold until launchservicesd stops")
            }
            for scheme in gone { desktopClaims[scheme] = nil }
            desktopClaims.merge(seen) { old, _ in old }
            // A desktop entry that arrives for a scheme an app already opens does not take it:
            // said once, as a native newcomer's claim is.
            for scheme in new.sorted() where registry.defaults[scheme] == nil {
                guard let holder = registry.handler(for: scheme) else { continue }
                let since = registry.registeredAt[holder.id].map(ClaimTime.iso8601) ?? "?"
                logger.warning("a desktop entry now handles '\(scheme)', held by \(holder.id) since \(since); \(holder.id) keeps opening it (lsctl explain \(scheme):); lsctl default \(scheme) DESKTOP-ID to change",
                               metadata: ["bundle_id": "\(holder.id)", "url_scheme": "\(scheme)"])
            }
            done()
        }
    }

    /// Who opens `scheme`: native apps and the desktop side under one rule. `desktop` is the
    /// desktop choice for the scheme (nil when desktop entries are off or none handles it).
    func resolve(_ scheme: URLScheme, desktop: DesktopChoice?) -> SchemeResolution? {
        var side: SchemeResolution.DesktopSide?
        if let desktop {
            let named = registry.defaults[scheme].flatMap { registry.apps[$0] == nil ? desktop.usable($0) : nil }
            side = SchemeResolution.DesktopSide(chosen: desktop.chosen, since: desktopClaims[scheme], userDefault: named)
        }
        return SchemeResolution.resolve(scheme, registry: registry, desktop: side, now: wallClock())
    }
}
