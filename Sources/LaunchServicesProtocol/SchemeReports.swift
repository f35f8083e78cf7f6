// The reports that say which handler opens a scheme, and why: `schemes` and `conflicts`
// (`SchemeReport`), `explain`, `default` and `clear-default` (`ExplainReport`), with their
// claims and the refused bundles that declare a scheme. The daemon encodes them as the other
// admin reports (AdminReports.swift); their desktop parts are in DesktopReports.swift.

/// One claim on a scheme: the app and since when it is registered, as ISO-8601 in UTC with
/// milliseconds (`2026-11-23T20:07:26.123Z`, `ClaimTime`); or the desktop side's claim, the
/// entry the desktop rules choose now and since when desktop entries first handled the scheme.
public struct ClaimReport: Codable, Sendable, Equatable {
    /// The bundle id, or for the desktop side's claim the chosen desktop file ID.
    public var app: String
    public var since: String
    /// `desktop` for the desktop side's claim (added in 0.3); absent for an app registered
    /// with the daemon (`native`).
    public var handlerKind: String?

    public init(app: String, since: String, handlerKind: String? = nil) {
        self.app = app
        self.since = since
        self.handlerKind = handlerKind
    }
}

/// One scheme and the handler that opens it (`schemes`, `conflicts`): an app registered with
/// the daemon or a desktop entry.
public struct SchemeReport: Codable, Sendable, Equatable {
    public var scheme: String
    /// The bundle id, or the desktop file ID, of the handler that opens it.
    public var app: String
    /// `userDefault`, `onlyClaimant` or `earliestRegistration` (the claim made first; ties,
    /// an app before the desktop side, then the smallest bundle id). Daemons before the
    /// registration time said `rule`.
    public var reason: String
    /// The apps that declare it, sorted by bundle id, then the desktop entries that can open
    /// it in the desktop rules' order (`desktopClaimants`).
    public var claimants: [String]
    /// Every claim in the rule's order: earliest first, ties as `reason` says. Empty when
    /// decoded from a daemon that did not send it.
    public var claims: [ClaimReport]
    /// The `CFBundleURLName` under which `app` declares the scheme (its kind); absent when
    /// that URL type has no name, when `app` is a desktop entry, and from a daemon that did
    /// not send it.
    public var kind: String?
    /// `native` or `desktop`: what `app` is (added in 0.3; absent from older daemons, whose
    /// handlers are all native).
    public var handlerKind: String?
    /// The desktop entries that can open the scheme (the one the desktop rules choose, then
    /// those they rank after it), among `claimants` (added in 0.3; left out when empty, so a
    /// row of apps alone reads as before).
    public var desktopClaimants: [String]
    /// The line that made the desktop rules choose their entry for the scheme, whether or not
    /// that entry opens it (added in 0.3); absent when no desktop entry can.
    public var desktopDecidedBy: DesktopSourceReport?

    public init(scheme: String, app: String, reason: String, claimants: [String], claims: [ClaimReport] = [], kind: String? = nil,
                handlerKind: String? = nil, desktopClaimants: [String] = [], desktopDecidedBy: DesktopSourceReport? = nil) {
        self.scheme = scheme
        self.app = app
        self.reason = reason
        self.claimants = claimants
        self.claims = claims
        self.kind = kind
        self.handlerKind = handlerKind
        self.desktopClaimants = desktopClaimants
        self.desktopDecidedBy = desktopDecidedBy
    }

    private enum CodingKeys: String, CodingKey { case scheme, app, reason, claimants, claims, kind, handlerKind, desktopClaimants, desktopDecidedBy }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(scheme: try c.decode(String.self, forKey: .scheme), app: try c.decode(String.self, forKey: .app),
                  reason: try c.decode(String.self, forKey: .reason), claimants: try c.decode([String].self, forKey: .claimants),
                  claims: try c.decodeIfPresent([ClaimReport].self, forKey: .claims) ?? [],
                  kind: try c.decodeIfPresent(String.self, forKey: .kind),
                  handlerKind: try c.decodeIfPresent(String.self, forKey: .handlerKind),
                  desktopClaimants: try c.decodeIfPresent([String].self, forKey: .desktopClaimants) ?? [],
                  desktopDecidedBy: try c.decodeIfPresent(DesktopSourceReport.self, forKey: .desktopDecidedBy))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(scheme, forKey: .scheme)
        try c.encode(app, forKey: .app)
        try c.encode(reason, forKey: .reason)
        try c.encode(claimants, forKey: .claimants)
        try c.encode(claims, forKey: .claims)
        try c.encodeIfPresent(kind, forKey: .kind)
        try c.encodeIfPresent(handlerKind, forKey: .handlerKind)
        if !desktopClaimants.isEmpty { try c.encode(desktopClaimants, forKey: .desktopClaimants) }
        try c.encodeIfPresent(desktopDecidedBy, forKey: .desktopDecidedBy)
    }
}

/// Which handler would open a URL, and why (`explain`, `default`, `clear-default`): an app
/// registered with the daemon or a desktop entry, and how the desktop entries chose among
/// themselves.
public struct ExplainReport: Codable, Sendable, Equatable {
    public var url: String
    public var scheme: String
    /// The bundle id, or the desktop file ID (`handlerKind`); absent when none.
    public var app: String?
    /// `userDefault`, `onlyClaimant`, `earliestRegistration`, or `noHandler` (daemons
    /// before the registration time said `rule` for `earliestRegistration`).
    public var reason: String
    public var why: String
    /// The apps that declare the scheme, sorted by bundle id, then the desktop entries that
    /// can open it in the desktop rules' order (`desktopClaimants`).
    public var claimants: [String]
    public var userDefault: String?
    /// Every claim in the rule's order, with since when (see `SchemeReport.claims`).
    public var claims: [ClaimReport]
    /// The `CFBundleURLName` under which `app` declares the scheme (see `SchemeReport.kind`);
    /// absent when there is no app, when it is a desktop entry, or its URL type has no name.
    public var kind: String?
    /// Bundles in the apps folders that declare the scheme but were refused (their claims
    /// count for nothing until fixed); empty for an app asking, and from daemons before it.
    public var refusedClaims: [RefusedClaimReport]
    /// `native` or `desktop`: what `app` is (added in 0.3); absent with `app`, and from older
    /// daemons (whose handlers are all native).
    public var handlerKind: String?
    /// The desktop entries among `claimants` (added in 0.3; left out when empty).
    public var desktopClaimants: [String]
    /// How the desktop entries chose among themselves, to the line (added in 0.3); absent when
    /// desktop entries are not read, for an app asking, and from older daemons.
    public var desktop: DesktopChoiceReport?

    public init(url: String, scheme: String, app: String?, reason: String, why: String, claimants: [String], userDefault: String?,
                claims: [ClaimReport] = [], kind: String? = nil, refusedClaims: [RefusedClaimReport] = [], handlerKind: String? = nil,
                desktopClaimants: [String] = [], desktop: DesktopChoiceReport? = nil) {
        self.handlerKind = handlerKind
        self.desktopClaimants = desktopClaimants
        self.desktop = desktop
        self.refusedClaims = refusedClaims
        self.url = url
        self.scheme = scheme
        self.app = app
        self.reason = reason
        self.why = why
        self.claimants = claimants
        self.userDefault = userDefault
        self.claims = claims
        self.kind = kind
    }

    private enum CodingKeys: String, CodingKey {
        case url, scheme, app, reason, why, claimants, userDefault, claims, kind, refusedClaims, handlerKind, desktopClaimants, desktop
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(url: try c.decode(String.self, forKey: .url), scheme: try c.decode(String.self, forKey: .scheme),
                  app: try c.decodeIfPresent(String.self, forKey: .app), reason: try c.decode(String.self, forKey: .reason),
                  why: try c.decode(String.self, forKey: .why), claimants: try c.decode([String].self, forKey: .claimants),
                  userDefault: try c.decodeIfPresent(String.self, forKey: .userDefault),
                  claims: try c.decodeIfPresent([ClaimReport].self, forKey: .claims) ?? [],
                  kind: try c.decodeIfPresent(String.self, forKey: .kind),
                  refusedClaims: try c.decodeIfPresent([RefusedClaimReport].self, forKey: .refusedClaims) ?? [],
                  handlerKind: try c.decodeIfPresent(String.self, forKey: .handlerKind),
                  desktopClaimants: try c.decodeIfPresent([String].self, forKey: .desktopClaimants) ?? [],
                  desktop: try c.decodeIfPresent(DesktopChoiceReport.self, forKey: .desktop))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(url, forKey: .url)
        try c.encode(scheme, forKey: .scheme)
        try c.encodeIfPresent(app, forKey: .app)
        try c.encode(reason, forKey: .reason)
        try c.encode(why, forKey: .why)
        try c.encode(claimants, forKey: .claimants)
        try c.encodeIfPresent(userDefault, forKey: .userDefault)
        try c.encode(claims, forKey: .claims)
        try c.encodeIfPresent(kind, forKey: .kind)
        try c.encode(refusedClaims, forKey: .refusedClaims)
        try c.encodeIfPresent(handlerKind, forKey: .handlerKind)
        if !desktopClaimants.isEmpty { try c.encode(desktopClaimants, forKey: .desktopClaimants) }
        try c.encodeIfPresent(desktop, forKey: .desktop)
    }
}

/// A refused bundle that declares a scheme (`ExplainReport.refusedClaims`): where it is and
/// why it was refused (the key and the problem, as `lsctl status` lists it).
public struct RefusedClaimReport: Codable, Sendable, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}
