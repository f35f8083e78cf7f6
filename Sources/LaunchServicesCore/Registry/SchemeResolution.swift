/// Who opens a scheme when native apps (Info.plist bundles in the registry) and desktop
/// entries (freedesktop `.desktop` files, chosen among themselves as GLib chooses) may both:
/// one rule over both kinds, which keeps the registry's promises.
///
/// 1. The user's explicit choice wins: `lsctl default SCHEME ID` names a native app that
///    claims the scheme, or a desktop entry that handles it (the chosen one, or one the
///    desktop rules ranked lower: a usable handler), by its desktop file ID.
/// 2. Otherwise the earliest claim wins, across both kinds. Native apps claim at their
///    registration time; the desktop side claims once, at the time the daemon first saw any
///    desktop entry handle the scheme, and is represented by the entry the desktop rules
///    choose now. So no app, native or desktop, installed later silently takes a scheme
///    another already serves, while the user's `mimeapps.list` still decides among desktop
///    entries. A tie (both first seen by one start) goes to the native app, which gets the
///    full launch lifecycle.
public struct SchemeResolution: Sendable, Equatable {
    public enum Handler: Sendable, Equatable {
        case native(AppBundle)
        case desktop(DesktopCandidate)

        /// The bundle identifier, or the desktop file ID.
        public var id: String {
            switch self {
            case .native(let app): app.id
            case .desktop(let candidate): candidate.id
            }
        }

        public var kind: Kind {
            switch self {
            case .native: .native
            case .desktop: .desktop
            }
        }
    }

    public typealias Kind = HandlerKind

    /// One claim on the scheme, of either kind.
    public struct Claim: Sendable, Equatable {
        public var kind: Kind
        public var id: String
        /// Milliseconds since the Unix epoch.
        public var since: Int64

        public init(kind: Kind, id: String, since: Int64) {
            self.kind = kind
            self.id = id
            self.since = since
        }
    }

    public var handler: Handler
    public var reason: Registry.ResolutionReason
    /// Every claim in the rule's order (earliest first; a tie: native first, then by id).
    public var claims: [Claim]

    /// What the desktop side brings to a scheme's resolution.
    public struct DesktopSide: Sendable, Equatable {
        /// The entry the desktop rules choose for the scheme; nil when none handles it.
        public var chosen: DesktopCandidate?
        /// When the daemon first saw a desktop entry handle the scheme (milliseconds since
        /// the Unix epoch); nil: now, for a side seen for the first time.
        public var since: Int64?
        /// The usable desktop handler the user's default names, when the default is not a
        /// native app (`DesktopChoice.usable(_:)`).
        public var userDefault: DesktopCandidate?

        public init(chosen: DesktopCandidate?, since: Int64?, userDefault: DesktopCandidate? = nil) {
            self.chosen = chosen
            self.since = since
            self.userDefault = userDefault
        }
    }

    public init(handler: Handler, reason: Registry.ResolutionReason, claims: [Claim]) {
        self.handler = handler
        self.reason = reason
        self.claims = claims
    }

    /// The handler of `scheme` under the rule above; nil when neither kind has one. `now`
    /// stands for the desktop side's time when it has none yet.
    public static func resolve(_ scheme: URLScheme, registry: Registry, desktop: DesktopSide?, now: Int64) -> SchemeResolution? {
        var claims = registry.claims(on: scheme).map { Claim(kind: .native, id: $0.app, since: $0.since) }
        if let chosen = desktop?.chosen {
            claims.append(Claim(kind: .desktop, id: chosen.id, since: desktop?.since ?? now))
            claims.sort(by: precedes)
        }
        if let chosenID = registry.defaults[scheme] {
            if registry.claimants[scheme]?.contains(chosenID) == true, let app = registry.apps[chosenID] {
                return SchemeResolution(handler: .native(app), reason: .userDefault, claims: claims)
            }
            if let named = desktop?.userDefault, named.id == chosenID {
                return SchemeResolution(handler: .desktop(named), reason: .userDefault, claims: claims)
            }
        }
        guard let first = claims.first else { return nil }
        let reason: Registry.ResolutionReason = claims.count == 1 ? .onlyClaimant : .earliestRegistration
        switch first.kind {
        case .native:
            guard let app = registry.apps[first.id] else { return nil }
            return SchemeResolution(handler: .native(app), reason: reason, claims: claims)
        case .desktop:
            guard let chosen = desktop?.chosen else { return nil }
            return SchemeResolution(handler: .desktop(chosen), reason: reason, claims: claims)
        }
    }

    /// Whether claim `a` comes before claim `b`: earlier first; at the same time a native
    /// app before the desktop side; then by identifier.
    static func precedes(_ a: Claim, _ b: Claim) -> Bool {
        if a.since != b.since { return a.since < b.since }
        if a.kind != b.kind { return a.kind == .native }
        return a.id < b.id
    }
}

extension DesktopChoice {
    /// The candidate with desktop file ID `id` when it is a usable handler of the type: the
    /// chosen one, or one ranked after it. A removed, hidden, uninstalled or missing entry is
    /// none.
    public func usable(_ id: String) -> DesktopCandidate? {
        candidates.first { candidate in
            guard candidate.id == id else { return false }
            switch candidate.verdict {
            case .chosen, .lost(.outranked): return true
            case .lost: return false
            }
        }
    }
}
