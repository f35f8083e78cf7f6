/// The desktop entry chosen for a MIME type (`x-scheme-handler/S`), every candidate in the
/// order they were tried with why it won or lost, and the file and line behind each.
public struct DesktopChoice: Sendable, Equatable {
    public var mimeType: String
    /// In the order GLib tries them: defaults first (folder by folder, each list in order),
    /// then associations (folder by folder: `[Added Associations]`, then the entries that
    /// declare the type, by ID); then candidates that never got that far (removed, hidden by
    /// an earlier folder), for the explanation.
    public var candidates: [DesktopCandidate]
    /// Association files that counted for nothing here, and why (ignored groups, unreadable
    /// files).
    public var notes: [String]
    /// GLib rules that departed from a spec in deciding this choice.
    public var specDifferences: [SpecDifference]
    /// Set when GLib 2.74 would choose otherwise (asked for, and rules other than `.glib`).
    public var glibDifference: GLibDifference?

    public init(mimeType: String, candidates: [DesktopCandidate], notes: [String] = [], specDifferences: [SpecDifference] = [],
                glibDifference: GLibDifference? = nil) {
        self.mimeType = mimeType
        self.candidates = candidates
        self.notes = notes
        self.specDifferences = specDifferences
        self.glibDifference = glibDifference
    }

    /// The chosen candidate, if any.
    public var chosen: DesktopCandidate? {
        candidates.first { $0.verdict == .chosen }
    }

    /// The chosen entry's desktop file ID.
    public var chosenID: String? { chosen?.id }

    /// The explanation as lines, for `lsctl explain`:
    ///
    ///     x-scheme-handler/mailto: org.example.Mail.desktop (~/.local/share/applications/org.example.Mail.desktop)
    ///       decided by ~/.config/mimeapps.list:7 [Default Applications]
    ///       1. org.example.Mail.desktop: chosen (~/.config/mimeapps.list:7 [Default Applications])
    ///       2. thunderbird.desktop: lost: its program 'thunderbird' (Exec, line 9) is not on PATH (/usr/bin:/bin) (/usr/share/applications/thunderbird.desktop:4 MimeType)
    public var explanation: [String] {
        var lines: [String] = []
        if let chosen {
            lines.append("\(mimeType): \(chosen.id)\(chosen.shownFile.map { " (\(TerminalText.escapingControls($0)))" } ?? "")")
            lines.append("  decided by \(chosen.source)")
        } else {
            lines.append("\(TerminalText.escapingControls(mimeType)): no desktop entry")
        }
        for (index, candidate) in candidates.enumerated() {
            lines.append("  \(index + 1). \(candidate)")
        }
        if let glibDifference { lines.append("  \(glibDifference)") }
        lines += specDifferences.map { "  note: \($0)" }
        lines += notes.map { "  note: \($0)" }
        return lines
    }
}

/// Where a candidate came from: the file, line and group (or key) that named it.
public struct DesktopSource: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case defaultApplications = "Default Applications"
        case addedAssociations = "Added Associations"
        case removedAssociations = "Removed Associations"
        case mimeCache = "MIME Cache"
        /// The entry's own `MimeType` key.
        case mimeType = "MimeType"
    }

    public var kind: Kind
    /// As found, absolute.
    public var file: String
    /// `file` with the home folder as `~`.
    public var shownFile: String
    public var line: Int

    public init(kind: Kind, file: String, shownFile: String? = nil, line: Int) {
        self.kind = kind
        self.file = file
        self.shownFile = shownFile ?? file
        self.line = line
    }

    /// `~/.config/mimeapps.list:7 [Default Applications]`, or
    /// `/usr/share/applications/foo.desktop:5 MimeType`.
    public var description: String {
        let place = TerminalText.escapingControls("\(shownFile):\(line)")
        return kind == .mimeType ? "\(place) MimeType" : "\(place) [\(kind.rawValue)]"
    }
}

/// One candidate and its fate.
public struct DesktopCandidate: Sendable, Equatable, CustomStringConvertible {
    public var id: String
    /// The line that made it a candidate (the first one, if several did).
    public var source: DesktopSource
    /// The entry file that decided its verdict, when one exists: for the chosen candidate,
    /// the entry to launch (its path, and its `Exec`, `Terminal`, `DBusActivatable`, …).
    public var entry: DesktopLayout.EntryFile?
    /// `entry`'s path with the home folder shown as `~`.
    public var shownFile: String?
    /// The other files with this ID that GLib tried and could not load: for a chosen or
    /// outranked candidate the earlier folders' files it stepped over, for a lost one the
    /// later folders' files that could not be loaded either.
    public var skipped: [SkippedFile]
    public var verdict: Verdict

    public init(id: String, source: DesktopSource, entry: DesktopLayout.EntryFile? = nil, shownFile: String? = nil,
                skipped: [SkippedFile] = [], verdict: Verdict) {
        self.id = id
        self.source = source
        self.entry = entry
        self.shownFile = shownFile ?? entry?.path
        self.skipped = skipped
        self.verdict = verdict
    }

    public enum Verdict: Sendable, Equatable {
        case chosen
        case lost(LossReason)
    }

    public var description: String {
        let skippedText = skipped.isEmpty ? "" : "; skipped " + skipped.map(\.description).joined(separator: "; ")
        switch verdict {
        case .chosen:
            return "\(TerminalText.escapingControls(id)): chosen (\(source))\(skippedText)"
        case .lost(let reason):
            return "\(TerminalText.escapingControls(id)): lost: \(reason) (\(source))\(skippedText)"
        }
    }
}

/// Why a candidate lost.
public enum LossReason: Sendable, Equatable, CustomStringConvertible {
    /// No data folder has a file with this ID.
    case noSuchEntry
    /// Every file with this ID has a defect GLib refuses (listed in `skipped`), or the file
    /// that owns the ID has one this daemon refuses.
    case defect(EntryDefect)
    /// A `[Removed Associations]` line removed it before it could be added.
    case removed(by: DesktopSource)
    /// A candidate before it was chosen (it would have been usable).
    case outranked(by: String)
    /// A later folder associates it with the type, but an earlier folder's file has its ID:
    /// that file is the entry, and it is not associated.
    case shadowed(by: String)

    /// A stable name for machine-readable output (`--json`).
    public var name: String {
        switch self {
        case .noSuchEntry: return "noSuchEntry"
        case .defect(let defect): return defect.name
        case .removed: return "removed"
        case .outranked: return "outranked"
        case .shadowed: return "shadowed"
        }
    }

    public var description: String {
        switch self {
        case .noSuchEntry: return "no data folder has this desktop file"
        case .defect(let defect): return defect.description
        case .removed(let source): return "removed in \(source)"
        case .outranked(let id): return "comes after the chosen \(TerminalText.escapingControls(id))"
        case .shadowed(let file): return "its ID belongs to \(TerminalText.escapingControls(file)), in an earlier folder, which is not associated with the type"
        }
    }
}

/// A same-ID file GLib stepped over, and why.
public struct SkippedFile: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var defect: EntryDefect

    public init(file: String, defect: EntryDefect) {
        self.file = file
        self.defect = defect
    }

    public var description: String { "\(TerminalText.escapingControls(file)): \(defect)" }
}

/// What GLib 2.74 would choose instead, and the deviations that make the difference.
public struct GLibDifference: Sendable, Equatable, CustomStringConvertible {
    public var glibChoice: String?
    public var deviations: [DesktopDeviation]

    public init(glibChoice: String?, deviations: [DesktopDeviation]) {
        self.glibChoice = glibChoice
        self.deviations = deviations
    }

    public var description: String {
        let choice = glibChoice.map { "would choose \(TerminalText.escapingControls($0))" } ?? "would choose nothing"
        return "GLib 2.74 (gio open) \(choice): " + deviations.map(\.description).joined(separator: "; ")
    }
}
