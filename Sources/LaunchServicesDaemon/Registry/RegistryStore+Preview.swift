import GRDB
import LaunchServicesCore

/// One scheme's part of the registry, read from the rows while the whole registry loads
/// (`RegistryService.finishLoading`), so that an open or `canOpen` of that scheme need not
/// wait for every app: what `SchemeResolution` reads for the scheme, and nothing else.
extension RegistryStore {
    public struct SchemePreview: Sendable {
        public var scheme: URLScheme
        /// Every saved app that claims the scheme, and the app the scheme's default names
        /// when it is saved (whether it claims the scheme decides; `SchemeResolution`).
        public var apps: [Stored]
        /// The user's default for the scheme, as `loadDefaults` reads it.
        public var defaultID: String?
        /// When a desktop entry first handled the scheme, as `desktopClaims` reads it.
        public var desktopClaim: Int64?
    }

    /// The rows `scheme`'s resolution depends on; this answer must be the one the whole
    /// registry gives. The apps are found through the claim index when the file is as this
    /// daemon's own clean stop left it (`checkSkipped`: every write since the index was built
    /// kept it), else from their own rows (`app.schemes`, a scan of one column): an earlier
    /// version writing to the file leaves the index behind until the load notices. Either
    /// way each candidate is parsed as the load parses it and kept only if it claims the
    /// scheme then. The defaults and desktop claims are read as the load reads them (their
    /// tables are small: the user's choices).
    public func preview(of scheme: URLScheme, fromIndex: Bool? = nil) throws -> SchemePreview {
        let defaultID = try loadDefaults()[scheme]
        let desktopClaim = try desktopClaims()[scheme]
        let fromIndex = fromIndex ?? checkSkipped
        return try database.read { db in
            var apps = try fromIndex
                ? Self.readApps(db, where: "id IN (SELECT appID FROM claim WHERE scheme = ?)", arguments: [scheme.normalized])
                // Schemes are saved space-separated and lowercase; LIKE compares ASCII letters
                // without case, as parsing would lowercase, and a scheme holds no '%' or '_'.
                : Self.readApps(db, where: "(' ' || schemes || ' ') LIKE ?", arguments: ["% \(scheme.normalized) %"])
            apps.removeAll { !$0.app.schemes.contains(scheme) }
            if let defaultID, !apps.contains(where: { $0.app.id == defaultID }) {
                apps += try Self.readApps(db, where: "id = ?", arguments: [defaultID])
            }
            return SchemePreview(scheme: scheme, apps: apps, defaultID: defaultID, desktopClaim: desktopClaim)
        }
    }
}

extension RegistryStore.SchemePreview {
    /// Adds this scheme's part to `registry` (built from previews only) and its desktop claim
    /// to `desktopClaims`: the scheme then resolves there as in the whole registry.
    func add(to registry: inout Registry, desktopClaims: inout [URLScheme: Int64], sources: inout [String: RegistryStore.Source]) {
        for stored in apps where registry.apps[stored.app.id] == nil {
            registry.register(stored.app, at: stored.registeredAt)
            sources[stored.app.id] = stored.source
        }
        registry.setDefault(defaultID, for: scheme)
        desktopClaims[scheme] = desktopClaim
    }
}
