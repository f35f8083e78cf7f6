/// The registered apps and the scheme index that resolution reads.
///
/// Resolution is a dictionary lookup, never a scan. When several apps claim a scheme the
/// winner is, in order: the user's default for that scheme, then the claimant registered
/// first (`registeredAt`; apps registered at the same instant, such as those found by one
/// folder scan, tie-break by the lexicographically smallest bundle identifier). A scheme that
/// already opens in an app keeps opening there when another app claims it later: the
/// newcomer is a contender, not the winner. The rule does not depend on the order in which
/// folders were scanned or apps were loaded, so the same registrations always resolve the
/// same way.
public struct Registry: Sendable {
    public private(set) var apps: [String: AppBundle] = [:]
    /// When each app was registered, in milliseconds since the Unix epoch (UTC).
    public private(set) var registeredAt: [String: Int64] = [:]
    /// Claimants per scheme, kept sorted by (registration time, bundle identifier): the
    /// first is the winner when no default is set.
    public private(set) var claimants = ClaimTable()
    /// User-chosen defaults (`lsctl default`), the analogue of LSSetDefaultHandlerForURLScheme.
    public private(set) var defaults: [URLScheme: String] = [:]

    public init() {}

    /// The registry of `registrations`, built in one pass for the daemon's start: the same
    /// as registering each in turn with `register(_:at:)` (a repeated identifier replaces
    /// the app and keeps its first time), without re-checking each claim's place as it goes;
    /// each scheme's claims are put in the rule's order once, at the end.
    public init(loading registrations: some Collection<(app: AppBundle, registeredAt: Int64)>) {
        let count = registrations.count
        apps.reserveCapacity(count)
        registeredAt.reserveCapacity(count)
        for (app, time) in registrations {
            if apps.updateValue(app, forKey: app.id) == nil { registeredAt[app.id] = time }
        }
        let schemes = apps.values.map(\.schemes)
        claimants.reserveCapacity(schemes.reduce(0) { $0 + $1.count })
        for (app, schemes) in zip(apps.values, schemes) {
            // One array for every scheme the app alone claims (copied on write when another
            // claimant joins): most schemes have one claimant, and an array each was about a
            // fifth of a large registry's memory.
            let alone = [app.id]
            for scheme in schemes { claimants.append(app.id, to: scheme, alone: alone) }
        }
        // Gathered first: changing the table while iterating it would copy all of it.
        let contested = claimants.filter { $0.value.count > 1 }
        for (scheme, ids) in contested {
            claimants.set(ids.sorted { Self.precedes((registeredAt[$0] ?? 0, $0), (registeredAt[$1] ?? 0, $1)) }, for: scheme)
        }
    }

    /// Adds or replaces an app. A replaced app (same identifier, still registered: a bundle
    /// rescanned with a changed Info.plist, registered again from the same path) keeps the
    /// time it was first registered at and `time` is ignored; a new app is registered at
    /// `time` (milliseconds since the Unix epoch). An app unregistered and registered again
    /// is new. A replaced app's old schemes are withdrawn first.
    public mutating func register(_ app: AppBundle, at time: Int64) {
        let time = registeredAt[app.id] ?? time
        unregister(app.id)
        apps[app.id] = app
        registeredAt[app.id] = time
        let registeredAt = registeredAt
        for scheme in app.schemes {
            // In place: a copy of the array taken out of the table would be copied again on insert.
            claimants.insert(app.id, on: scheme) { ids in
                ids.firstIndex { Self.precedes((time, app.id), (registeredAt[$0] ?? 0, $0)) } ?? ids.endIndex
            }
        }
    }

    /// Whether a claim registered at `a` comes before one registered at `b`.
    private static func precedes(_ a: (Int64, String), _ b: (Int64, String)) -> Bool {
        a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }

    /// Removes an app; returns it, or `nil` when no app has that identifier.
    @discardableResult
    public mutating func unregister(_ id: String) -> AppBundle? {
        guard let old = apps.removeValue(forKey: id) else { return nil }
        registeredAt[id] = nil
        for scheme in old.schemes { claimants.remove(id, from: scheme) }
        return old
    }

    public mutating func setDefault(_ id: String?, for scheme: URLScheme) {
        defaults[scheme] = id
    }

    /// Why an app was chosen to handle a scheme.
    public enum ResolutionReason: String, Sendable {
        case userDefault
        case onlyClaimant
        /// Several apps claim the scheme and no default is set: the one registered first
        /// (ties: the smallest bundle identifier).
        case earliestRegistration
    }

    /// One app's claim on a scheme: the app and when it was registered.
    public struct Claim: Sendable, Equatable {
        public var app: String
        /// Milliseconds since the Unix epoch.
        public var since: Int64

        public init(app: String, since: Int64) {
            self.app = app
            self.since = since
        }
    }

    public struct Resolution: Sendable, Equatable {
        public var app: AppBundle
        public var reason: ResolutionReason
        /// Every app claiming the scheme, winner included, sorted by identifier.
        public var claimants: [String]
        /// Every claim on the scheme in the rule's order: registration time, then identifier.
        public var claims: [Claim]
    }

    /// The claims on `scheme` in the rule's order (earliest registration first).
    public func claims(on scheme: URLScheme) -> [Claim] {
        (claimants[scheme] ?? []).map { Claim(app: $0, since: registeredAt[$0] ?? 0) }
    }

    /// The app that opens `scheme`, or `nil` when no app claims it.
    public func resolve(_ scheme: URLScheme) -> Resolution? {
        guard let ids = claimants[scheme], let first = ids.first else { return nil }
        let claims = claims(on: scheme)
        let byID = ids.sorted()
        if let chosen = defaults[scheme], ids.contains(chosen), let app = apps[chosen] {
            return Resolution(app: app, reason: .userDefault, claimants: byID, claims: claims)
        }
        guard let app = apps[first] else { return nil }
        return Resolution(app: app, reason: ids.count == 1 ? .onlyClaimant : .earliestRegistration, claimants: byID, claims: claims)
    }

    /// A fast path for the hot open: only the winner. (Most users set no default: then the
    /// defaults are not hashed into.)
    public func handler(for scheme: URLScheme) -> AppBundle? {
        guard let ids = claimants[scheme], let first = ids.first else { return nil }
        if !defaults.isEmpty, let chosen = defaults[scheme], ids.contains(chosen), let app = apps[chosen] { return app }
        return apps[first]
    }
}
