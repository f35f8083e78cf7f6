import LaunchServicesCore
import LaunchServicesProtocol

/// Why a URL opens where it does (`lsctl explain`, and the answer of `lsctl default`): the
/// registry's resolution in words, with every claimant and the refused bundles that declare
/// the scheme.
struct SchemeExplanation {
    private let registry: Registry
    private let refused: [BundleError]

    init(_ service: RegistryService) {
        registry = service.registry
        refused = service.refused
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
            return self.scheme(scheme, url: text, showRefused: visible == nil)
        } catch {
            return .failure(OpenError(.invalidURL, "invalid URL: \(error)"))
        }
    }

    /// `showRefused`: name the refused bundles that declare the scheme (the user's tools
    /// only; an app learns no bundle paths).
    func scheme(_ scheme: URLScheme, url: String?, showRefused: Bool = true) -> Message {
        let userDefault = registry.defaults[scheme]
        let refusedClaims = showRefused ? refused.filter { $0.declaredSchemes.contains(scheme) }.map {
            RefusedClaimReport(path: TerminalText.escapingControls($0.path), reason: TerminalText.escapingControls(($0.key.map { "\($0) " } ?? "") + $0.problem))
        } : []
        guard let resolution = registry.resolve(scheme) else {
            var why = "no registered app declares '\(scheme)' in its CFBundleURLTypes"
            if let first = refusedClaims.first {
                why += refusedClaims.count == 1
                    ? "; the bundle \(first.path) declares it but was refused: \(first.reason)"
                    : "; \(refusedClaims.count) bundles declare it but were refused (see refusedClaims; lsctl status lists why)"
                why += "; fix the bundle, then lsctl rescan"
            }
            return .queryResult(json: JSONDocument.encode(ExplainReport(
                url: url ?? "\(scheme):", scheme: scheme.normalized, app: nil, reason: "noHandler",
                why: why, claimants: [], userDefault: userDefault, refusedClaims: refusedClaims)))
        }
        let why: String
        switch resolution.reason {
        case .userDefault: why = "the user chose \(resolution.app.id) for '\(scheme)' (lsctl default)"
        case .onlyClaimant: why = "\(resolution.app.id) is the only app that declares '\(scheme)'"
        case .earliestRegistration:
            let since = resolution.claims.first.map { ClaimTime.iso8601($0.since) } ?? "?"
            let tie = resolution.claims.count > 1 && resolution.claims[0].since == resolution.claims[1].since
            why = "\(resolution.claimants.count) apps declare '\(scheme)' and no default is set: \(resolution.app.id) was registered first (\(since))"
                + (tie ? ", with the smallest bundle id of those registered then" : "")
                + "; lsctl default \(scheme) BUNDLE-ID to choose another"
        }
        return .queryResult(json: JSONDocument.encode(ExplainReport(
            url: url ?? "\(scheme):", scheme: scheme.normalized, app: resolution.app.id, reason: resolution.reason.rawValue,
            why: why, claimants: resolution.claimants, userDefault: userDefault, claims: resolution.claims.map(ClaimReport.init),
            kind: resolution.app.kind(of: scheme), refusedClaims: refusedClaims)))
    }
}
