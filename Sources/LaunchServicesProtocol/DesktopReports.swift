import LaunchServicesCore

/// The desktop side of the administrative reports (added in 0.3): how the desktop entries
/// chose among themselves for a scheme (`ExplainReport.desktop`), the line that decided
/// (`SchemeReport.desktopDecidedBy`), and what `status` says of their reading
/// (`StatusReport.desktopEntries`). Field names are part of the interface: add, never rename.

/// A line of a file that made an entry a candidate: a `mimeapps.list` group's line, a
/// `mimeinfo.cache` line, or the entry's own `MimeType`.
public struct DesktopSourceReport: Codable, Sendable, Equatable {
    /// The file, absolute.
    public var file: String
    public var line: Int
    /// `Default Applications`, `Added Associations`, `Removed Associations`, `MIME Cache`, or
    /// `MimeType` (the entry's own key).
    public var group: String
    /// As a person reads it, the home folder as `~`:
    /// `~/.config/mimeapps.list:7 [Default Applications]`, or
    /// `/usr/share/applications/foo.desktop:5 MimeType`.
    public var text: String

    public init(file: String, line: Int, group: String, text: String) {
        self.file = file
        self.line = line
        self.group = group
        self.text = text
    }

    /// The group a `[Default Applications]` line has: the user's (or the system's) explicit
    /// choice among desktop entries.
    public static let defaultApplications = "Default Applications"
}

/// One desktop entry that was a candidate for a scheme, and its fate.
public struct DesktopCandidateReport: Codable, Sendable, Equatable {
    /// The desktop file ID.
    public var id: String
    /// The entry file that decided its verdict (for the chosen one, the file launched);
    /// absent when none exists.
    public var file: String?
    /// `chosen` or `lost`.
    public var verdict: String
    /// Why it lost, a stable name: `noSuchEntry`, `removed`, `outranked`, `shadowed`, or the
    /// entry's defect (`programNotFound`, `hidden`, `notApplication`, `unreadable`,
    /// `firstGroupIsNotDesktopEntry`, `execDoesNotSplit`, `nothingToRun`, `ownExport`).
    /// Absent for the chosen one.
    public var reason: String?
    /// Why it lost, a sentence (`removed in ~/.config/mimeapps.list:4 [Removed Associations]`,
    /// `its program 'thunderbird' (Exec, line 9) is not on PATH (/usr/bin:/bin)`, …).
    public var reasonText: String?
    /// The line that made it a candidate.
    public var source: DesktopSourceReport
    /// Other files with its ID that were stepped over, each `FILE: why`.
    public var skipped: [String]

    public init(id: String, file: String?, verdict: String, reason: String? = nil, reasonText: String? = nil, source: DesktopSourceReport,
                skipped: [String] = []) {
        self.id = id
        self.file = file
        self.verdict = verdict
        self.reason = reason
        self.reasonText = reasonText
        self.source = source
        self.skipped = skipped
    }

    /// A usable handler of the scheme: the chosen one, or one ranked after it.
    public var isUsable: Bool { verdict == "chosen" || reason == "outranked" }

    private enum CodingKeys: String, CodingKey { case id, file, verdict, reason, reasonText, source, skipped }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), file: try c.decodeIfPresent(String.self, forKey: .file),
                  verdict: try c.decode(String.self, forKey: .verdict), reason: try c.decodeIfPresent(String.self, forKey: .reason),
                  reasonText: try c.decodeIfPresent(String.self, forKey: .reasonText), source: try c.decode(DesktopSourceReport.self, forKey: .source),
                  skipped: try c.decodeIfPresent([String].self, forKey: .skipped) ?? [])
    }
}

/// How the desktop entries chose among themselves for a scheme's MIME type
/// (`x-scheme-handler/S`), as GLib chooses: the chosen one and the line that decided, and
/// every candidate in the order tried with why it won or lost.
public struct DesktopChoiceReport: Codable, Sendable, Equatable {
    /// `x-scheme-handler/S`.
    public var mimeType: String
    /// The desktop file ID chosen; absent when no candidate is usable.
    public var chosen: String?
    /// The line that chose it; absent with `chosen`.
    public var decidedBy: DesktopSourceReport?
    public var candidates: [DesktopCandidateReport]
    /// Sentences: where this daemon's choice differs from GLib's (`gio open`) and why, where
    /// GLib's rule departs from the specs, association files that counted for nothing.
    public var notes: [String]

    public init(mimeType: String, chosen: String?, decidedBy: DesktopSourceReport?, candidates: [DesktopCandidateReport], notes: [String] = []) {
        self.mimeType = mimeType
        self.chosen = chosen
        self.decidedBy = decidedBy
        self.candidates = candidates
        self.notes = notes
    }

    /// The usable handlers' IDs in the order the desktop rules rank them (the chosen first).
    public var usable: [String] {
        var seen = Set<String>()
        return candidates.filter { $0.isUsable && seen.insert($0.id).inserted }.map(\.id)
    }

    private enum CodingKeys: String, CodingKey { case mimeType, chosen, decidedBy, candidates, notes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(mimeType: try c.decode(String.self, forKey: .mimeType), chosen: try c.decodeIfPresent(String.self, forKey: .chosen),
                  decidedBy: try c.decodeIfPresent(DesktopSourceReport.self, forKey: .decidedBy),
                  candidates: try c.decodeIfPresent([DesktopCandidateReport].self, forKey: .candidates) ?? [],
                  notes: try c.decodeIfPresent([String].self, forKey: .notes) ?? [])
    }
}

extension ClaimReport {
    /// Whether this is the desktop side's claim.
    public var isDesktop: Bool { handlerKind == SchemeResolution.Kind.desktop.rawValue }
}

extension ExplainReport {
    /// Whether `app` is a desktop entry.
    public var isDesktop: Bool { handlerKind == SchemeResolution.Kind.desktop.rawValue }
}

/// `status`'s `desktopEntries`: whether desktop entries are read, how many, from where, when
/// last, and what could not be read or was skipped (at most 20 problems listed, the rest
/// counted in `moreProblems`).
public struct DesktopEntriesReport: Codable, Sendable, Equatable {
    /// `desktopEntries.enabled` in the configuration.
    public var enabled: Bool
    /// Whether the first read is in (or was waited for as long as allowed).
    public var ready: Bool
    /// Desktop entry files found by the last read (readable or not).
    public var entries: Int
    /// Schemes some usable entry handles.
    public var schemesHandled: Int
    /// The configuration and `applications` folders read, in GLib's order.
    public var folders: [String]
    /// Folders the watch covers (those, and the subfolders read); 0 without a watch.
    public var foldersWatched: Int
    /// When the last read was taken in, ISO-8601 in UTC with milliseconds; absent before the first.
    public var lastRead: String?
    /// Reads taken in since the start.
    public var generation: Int
    /// First what could not be read now, then files skipped and why, one sentence each.
    public var problems: [String]
    /// Problems beyond those listed.
    public var moreProblems: Int

    public init(enabled: Bool, ready: Bool, entries: Int, schemesHandled: Int, folders: [String], foldersWatched: Int, lastRead: String?,
                generation: Int, problems: [String], moreProblems: Int) {
        self.enabled = enabled
        self.ready = ready
        self.entries = entries
        self.schemesHandled = schemesHandled
        self.folders = folders
        self.foldersWatched = foldersWatched
        self.lastRead = lastRead
        self.generation = generation
        self.problems = problems
        self.moreProblems = moreProblems
    }
}
