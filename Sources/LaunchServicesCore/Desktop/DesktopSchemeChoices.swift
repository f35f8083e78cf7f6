/// The chosen desktop entry for every scheme some file mentions, taken at one read: what a
/// re-read is compared with (which schemes moved, and the line that moved each), and a
/// one-lookup answer to "which entry opens S" between reads.
public struct DesktopSchemeChoices: Sendable, Equatable {
    /// By scheme, ASCII-lowercased; a mentioned scheme no usable entry handles is absent.
    public private(set) var chosen: [String: DesktopCandidate] = [:]

    public init() {}

    /// Chooses for every scheme `handlers`' files mention. A scheme no file mentions has no
    /// candidate at all, so this is the whole answer.
    public init(_ handlers: DesktopHandlers) {
        for scheme in handlers.mentionedSchemes {
            let key = Self.key(scheme)
            guard chosen[key] == nil, let candidate = handlers.chosen(forScheme: key) else { continue }
            chosen[key] = candidate
        }
    }

    public func chosen(forScheme scheme: String) -> DesktopCandidate? { chosen[Self.key(scheme)] }

    /// The same for a validated scheme, on the open path: its normalized form is already the
    /// key (both are ASCII-lowercased), so no string is built per lookup.
    public func chosen(for scheme: URLScheme) -> DesktopCandidate? { chosen[scheme.normalized] }

    /// What moved from `self` to `later`, by scheme: another entry chosen, the same ID from
    /// another file, or none any more.
    public func moves(to later: DesktopSchemeChoices) -> [DesktopHandlerMove] {
        Set(chosen.keys).union(later.chosen.keys).sorted().compactMap { scheme in
            let before = chosen[scheme]
            let after = later.chosen[scheme]
            guard before?.id != after?.id || before?.entry?.path != after?.entry?.path else { return nil }
            return DesktopHandlerMove(scheme: scheme, before: before, after: after)
        }
    }

    /// As `DesktopHandlers.mimeType(forScheme:)` lowercases it.
    static func key(_ scheme: String) -> String {
        String(decoding: scheme.utf8.map(KeyFileParser.lowercased), as: UTF8.self)
    }
}

/// One scheme whose desktop handler changed at a re-read.
public struct DesktopHandlerMove: Sendable, Equatable, CustomStringConvertible {
    public var scheme: String
    public var before: DesktopCandidate?
    public var after: DesktopCandidate?

    public init(scheme: String, before: DesktopCandidate?, after: DesktopCandidate?) {
        self.scheme = scheme
        self.before = before
        self.after = after
    }

    /// `desktop handler for 'mailto' is now org.example.Mail.desktop (was thunderbird.desktop):
    /// ~/.config/mimeapps.list:7 [Default Applications]` — the line that decided now. The same
    /// ID from another file names both files; `none` when no entry handles it any more.
    public var description: String {
        let scheme = TerminalText.escapingControls(scheme)
        let was = before.map { TerminalText.escapingControls($0.id) } ?? "none"
        guard let after else { return "desktop handler for '\(scheme)' is now none (was \(was))" }
        let now = TerminalText.escapingControls(after.id)
        if let before, before.id == after.id {
            let from = TerminalText.escapingControls(after.shownFile ?? "?")
            let old = TerminalText.escapingControls(before.shownFile ?? "?")
            return "desktop handler for '\(scheme)' is now \(now) from \(from) (was from \(old)): \(after.source)"
        }
        return "desktop handler for '\(scheme)' is now \(now) (was \(was)): \(after.source)"
    }
}
