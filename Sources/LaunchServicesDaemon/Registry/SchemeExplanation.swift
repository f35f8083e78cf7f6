import LaunchServicesCore
import LaunchServicesProtocol

/// Why a URL opens where it does (`lsctl explain`, the answer of `lsctl default`, and the rows
/// of `lsctl schemes` and `conflicts`): apps registered with the daemon and desktop entries
/// under the one rule (`SchemeResolution`), in words, with every claimant of either kind, how
/// the desktop entries chose among themselves to the line (`DesktopChoice`), and the refused
/// bundles that declare the scheme. It only reads the rooms: the rule decides.
struct SchemeExplanation {
    private let service: RegistryService
    private let desktop: DesktopService?

    /// `desktop`: nil, or a room with desktop entries turned off, leaves them out.
    init(_ service: RegistryService, desktop: DesktopService?) {
        self.service = service
        self.desktop = desktop
    }

    /// How the desktop entries choose for `scheme`, every candidate explained; with
    /// `comparingWithGLib`, also what GLib would choose where it differs. Nil when desktop
    /// entries are not read.
    func desktopChoice(_ scheme: URLScheme, comparingWithGLib: Bool = false) -> DesktopChoice? {
        guard let desktop, desktop.settings.enabled else { return nil }
        return desktop.choice(forScheme: scheme.normalized, comparingWithGLib: comparingWithGLib)
    }

    /// The usable desktop handlers' IDs (the chosen one, then those ranked after it).
    static func usable(_ choice: DesktopChoice?) -> [String] {
        guard let choice else { return [] }
        var seen = Set<String>()
        return choice.candidates.compactMap { choice.usable($0.id) != nil && seen.insert($0.id).inserted ? $0.id : nil }
    }

    /// `visible`: the schemes the asker may learn about (an app's
    /// LSApplicationQueriesSchemes and its own), nil for the user's tools.
    func url(_ text: String, visible: Set<URLScheme>?) -> Message {
        do {
            let scheme = try ParsedURL(text).scheme
            // An app learns only about the schemes it may query (LSApplicationQueriesSchemes).
            guard visible?.contains(scheme) ?? true else {
                return .failure(OpenError(.notPermitted, "'\(scheme)' is not in this app's LSApplicationQueriesSchemes, so it may not ask about it"))
            }
            return self.scheme(scheme, url: text, forUser: visible == nil)
        } catch {
            return .failure(OpenError(.invalidURL, "invalid URL: \(error)"))
        }
    }

    /// `forUser`: name the refused bundles that declare the scheme and say how the desktop
    /// entries chose, with their files (the user's tools only; an app learns no paths).
    func scheme(_ scheme: URLScheme, url: String?, forUser: Bool = true) -> Message {
        .queryResult(json: JSONDocument.encode(report(scheme, url: url, forUser: forUser)))
    }

    func report(_ scheme: URLScheme, url: String?, forUser: Bool = true) -> ExplainReport {
        let registry = service.registry
        let userDefault = registry.defaults[scheme]
        let refusedClaims = forUser ? service.refused.filter { $0.declaredSchemes.contains(scheme) }.map {
            RefusedClaimReport(path: TerminalText.escapingControls($0.path), reason: TerminalText.escapingControls(($0.key.map { "\($0) " } ?? "") + $0.problem))
        } : []
        let choice = desktopChoice(scheme, comparingWithGLib: forUser)
        let native = registry.claimants[scheme]?.sorted() ?? []
        let desktopClaimants = Self.usable(choice)
        let desktopReport = forUser ? choice.map(DesktopChoiceReport.init) : nil
        guard let resolution = service.resolve(scheme, desktop: choice) else {
            var why = "no registered app declares '\(scheme)' in its CFBundleURLTypes"
            if let choice {
                why += " and no desktop entry can open \(choice.mimeType)"
                if !choice.candidates.isEmpty {
                    why += choice.candidates.count == 1 ? " (its one candidate lost: see why below)" : " (its \(choice.candidates.count) candidates lost: see why below)"
                }
            }
            if let first = refusedClaims.first {
                why += refusedClaims.count == 1
                    ? "; the bundle \(first.path) declares it but was refused: \(first.reason)"
                    : "; \(refusedClaims.count) bundles declare it but were refused (see refusedClaims; lsctl status lists why)"
                why += "; fix the bundle, then lsctl rescan"
            }
            return ExplainReport(url: url ?? "\(scheme):", scheme: scheme.normalized, app: nil, reason: "noHandler", why: why, claimants: [],
                                 userDefault: userDefault, refusedClaims: refusedClaims, desktop: desktopReport)
        }
        var kind: String?
        if case .native(let app) = resolution.handler { kind = app.kind(of: scheme) }
        return ExplainReport(
            url: url ?? "\(scheme):", scheme: scheme.normalized, app: resolution.handler.id, reason: resolution.reason.rawValue,
            why: Self.why(resolution, scheme: scheme, native: native, desktop: choice), claimants: native + desktopClaimants, userDefault: userDefault,
            claims: resolution.claims.map(ClaimReport.init), kind: kind, refusedClaims: refusedClaims,
            handlerKind: resolution.handler.kind.rawValue, desktopClaimants: desktopClaimants, desktop: desktopReport)
    }

    /// `scheme`'s row in `lsctl schemes` (and `conflicts`, with `onlyConflicts`: a scheme more
    /// than one handler of either kind can open); nil when no handler opens it (or it is no
    /// conflict).
    func row(_ scheme: URLScheme, onlyConflicts: Bool = false) -> SchemeReport? {
        let choice = desktopChoice(scheme)
        let native = service.registry.claimants[scheme]?.sorted() ?? []
        let desktopClaimants = Self.usable(choice)
        guard !onlyConflicts || native.count + desktopClaimants.count > 1, let resolution = service.resolve(scheme, desktop: choice) else { return nil }
        var kind: String?
        if case .native(let app) = resolution.handler { kind = app.kind(of: scheme) }
        return SchemeReport(scheme: scheme.normalized, app: resolution.handler.id, reason: resolution.reason.rawValue, claimants: native + desktopClaimants,
                            claims: resolution.claims.map(ClaimReport.init), kind: kind, handlerKind: resolution.handler.kind.rawValue,
                            desktopClaimants: desktopClaimants, desktopDecidedBy: choice?.chosen.map { DesktopSourceReport($0.source) })
    }

    /// The schemes some handler of either kind opens: those apps declare, and those a desktop
    /// entry handles.
    var schemes: [URLScheme] {
        var schemes = Set(service.registry.claimants.keys)
        if let desktop, desktop.settings.enabled { schemes.formUnion(desktop.handledSchemes) }
        return schemes.sorted()
    }

    /// The resolution in a sentence.
    static func why(_ resolution: SchemeResolution, scheme: URLScheme, native: [String], desktop: DesktopChoice?) -> String {
        let id = resolution.handler.id
        let chosen = desktop?.chosen
        let others = max(0, usable(desktop).count - 1)
        let outranking = others == 0 ? "" : ", over \(others) other desktop \(others == 1 ? "entry" : "entries") that can open it"
        switch resolution.reason {
        case .userDefault:
            return "the user chose \(id) for '\(scheme)' (lsctl default)"
        case .onlyClaimant:
            guard case .desktop(let candidate) = resolution.handler else { return "\(id) is the only app that declares '\(scheme)'" }
            return "\(id) is the desktop entry chosen for \(desktop?.mimeType ?? "x-scheme-handler/\(scheme)") by \(candidate.source)\(outranking), and no registered app declares '\(scheme)'"
        case .earliestRegistration:
            let first = resolution.claims[0]
            let since = ClaimTime.iso8601(first.since)
            let tie = resolution.claims.count > 1 && resolution.claims[0].since == resolution.claims[1].since
            let choose = "; lsctl default \(scheme) ID to choose another"
            guard let chosen, let desktopClaim = resolution.claims.first(where: { $0.kind == .desktop }) else {
                return "\(native.count) apps declare '\(scheme)' and no default is set: \(id) was registered first (\(since))"
                    + (tie ? ", with the smallest bundle id of those registered then" : "") + choose
            }
            let apps = native.count == 1 ? "1 app declares it" : "\(native.count) apps declare it"
            let side = "desktop entries can open '\(scheme)' (\(chosen.id), chosen by \(chosen.source)\(outranking)) and \(apps)"
            switch first.kind {
            case .native:
                let when = desktopClaim.since == first.since ? ", when desktop entries first handled it too: at a tie the registered app wins"
                    : ", before desktop entries first handled it (\(ClaimTime.iso8601(desktopClaim.since)))"
                let firstNative = tie && resolution.claims[1].kind == .native ? ", with the smallest bundle id of those registered then" : ""
                return "\(side); no default is set: \(id) was registered first (\(since))\(firstNative)\(when)" + choose
            case .desktop:
                let nativeFirst = resolution.claims.first { $0.kind == .native }
                let before = nativeFirst.map { ", before \($0.id) was registered (\(ClaimTime.iso8601($0.since)))" } ?? ""
                return "\(side); no default is set: desktop entries handled it first (\(since))\(before)" + choose
            }
        }
    }
}
