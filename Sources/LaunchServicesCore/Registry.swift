/// The registered apps and the scheme index that resolution reads.
///
/// Resolution is a dictionary lookup, never a scan. When several apps claim a scheme the
/// winner is, in order: the user's default for that scheme, then the claimant with the
/// lexicographically smallest bundle identifier — a rule that does not depend on the order
/// in which folders were scanned, so the same set of apps always resolves the same way.
public struct Registry: Sendable {
    public private(set) var apps: [String: AppBundle] = [:]
    /// Claimants per scheme, kept sorted by bundle identifier.
    public private(set) var claimants: [URLScheme: [String]] = [:]
    /// User-chosen defaults (`lsctl default`), the analogue of LSSetDefaultHandlerForURLScheme.
    public private(set) var defaults: [URLScheme: String] = [:]

    public init() {}

    /// Adds or replaces an app. A replaced app's old schemes are withdrawn first.
    public mutating func register(_ app: AppBundle) {
        unregister(app.id)
        apps[app.id] = app
        for scheme in app.schemes {
            var ids = claimants[scheme, default: []]
            let at = ids.firstIndex { $0 > app.id } ?? ids.endIndex
            ids.insert(app.id, at: at)
            claimants[scheme] = ids
        }
    }

    /// Removes an app; returns it, or `nil` when no app has that identifier.
    @discardableResult
    public mutating func unregister(_ id: String) -> AppBundle? {
        guard let old = apps.removeValue(forKey: id) else { return nil }
        for scheme in old.schemes {
            var ids = claimants[scheme, default: []]
            ids.removeAll { $0 == id }
            claimants[scheme] = ids.isEmpty ? nil : ids
        }
        return old
    }

    public mutating func setDefault(_ id: String?, for scheme: URLScheme) {
        defaults[scheme] = id
    }

    /// Why an app was chosen to handle a scheme.
    public enum ResolutionReason: String, Sendable {
        case userDefault
        case onlyClaimant
        case rule
    }

    public struct Resolution: Sendable, Equatable {
        public var app: AppBundle
        public var reason: ResolutionReason
        /// Every app claiming the scheme, winner included, sorted by identifier.
        public var claimants: [String]
    }

    /// The app that opens `scheme`, or `nil` when no app claims it.
    public func resolve(_ scheme: URLScheme) -> Resolution? {
        guard let ids = claimants[scheme], let first = ids.first else { return nil }
        if let chosen = defaults[scheme], ids.contains(chosen), let app = apps[chosen] {
            return Resolution(app: app, reason: .userDefault, claimants: ids)
        }
        guard let app = apps[first] else { return nil }
        return Resolution(app: app, reason: ids.count == 1 ? .onlyClaimant : .rule, claimants: ids)
    }

    /// A fast path for the hot open: only the winner.
    public func handler(for scheme: URLScheme) -> AppBundle? {
        guard let ids = claimants[scheme], let first = ids.first else { return nil }
        if let chosen = defaults[scheme], ids.contains(chosen), let app = apps[chosen] { return app }
        return apps[first]
    }
}
