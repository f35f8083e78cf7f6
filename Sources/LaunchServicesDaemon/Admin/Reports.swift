import Foundation
import LaunchServicesCore
import LaunchServicesProtocol

// The report types themselves (StatusReport, AppReport, …) are shared with lsctl and the
// tests: LaunchServicesProtocol/AdminReports.swift. Here: how the daemon encodes them and
// builds them from its own values.

enum JSONDocument {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension PasteboardReport {
    init(_ snapshot: PasteboardSnapshot) {
        // A protected pasteboard's types and sizes stay private too.
        self.init(name: snapshot.name, changeCount: snapshot.changeCount,
                  items: snapshot.passwordProtected ? [] : snapshot.items.map { Item(type: $0.type, bytes: $0.data.count) },
                  bytes: snapshot.passwordProtected ? 0 : snapshot.items.reduce(0) { $0 + $1.data.count },
                  expiresInSeconds: snapshot.expiresInSeconds, persistent: snapshot.persistent,
                  passwordProtected: snapshot.passwordProtected)
    }
}

extension AppReport {
    init(_ app: AppBundle) {
        self.init(id: app.id, name: app.name, path: app.path, executable: app.executable,
                  schemes: app.schemes.map(\.normalized), queriesSchemes: app.queriesSchemes.map(\.normalized).sorted(),
                  urlTypes: app.urlTypes.map(URLTypeReport.init))
    }
}

extension URLTypeReport {
    init(_ type: AppBundle.URLType) {
        self.init(name: type.name, schemes: type.schemes.map(\.normalized))
    }
}

extension ClaimReport {
    /// A claim as reports show it: its time as ISO-8601 in UTC.
    init(_ claim: Registry.Claim) {
        self.init(app: claim.app, since: ClaimTime.iso8601(claim.since))
    }
}

extension ClaimReport {
    /// A claim of either kind: an app's, or the desktop side's (its chosen entry).
    init(_ claim: SchemeResolution.Claim) {
        self.init(app: claim.id, since: ClaimTime.iso8601(claim.since), handlerKind: claim.kind == .desktop ? claim.kind.rawValue : nil)
    }
}

extension DesktopSourceReport {
    init(_ source: DesktopSource) {
        self.init(file: source.file, line: source.line, group: source.kind.rawValue, text: source.description)
    }
}

extension DesktopCandidateReport {
    init(_ candidate: DesktopCandidate) {
        let reason: LossReason? = if case .lost(let reason) = candidate.verdict { reason } else { nil }
        self.init(id: candidate.id, file: candidate.entry?.path, verdict: reason == nil ? "chosen" : "lost", reason: reason?.name,
                  reasonText: reason?.description, source: DesktopSourceReport(candidate.source), skipped: candidate.skipped.map(\.description))
    }
}

extension DesktopChoiceReport {
    /// The choice with every candidate, and as notes: what GLib would choose instead (when
    /// asked for), where GLib's rule departs from the specs, and files that counted for nothing.
    init(_ choice: DesktopChoice) {
        let notes = (choice.glibDifference.map { [$0.description] } ?? []) + choice.specDifferences.map(\.description)
            + choice.notes.map { TerminalText.escapingControls($0) }
        self.init(mimeType: choice.mimeType, chosen: choice.chosenID, decidedBy: choice.chosen.map { DesktopSourceReport($0.source) },
                  candidates: choice.candidates.map(DesktopCandidateReport.init), notes: notes)
    }
}

extension DesktopEntriesReport {
    init(_ status: DesktopEntriesStatus) {
        self.init(enabled: status.enabled, ready: status.ready, entries: status.entries, schemesHandled: status.schemesHandled, folders: status.folders,
                  foldersWatched: status.foldersWatched, lastRead: status.lastRead, generation: status.generation, problems: status.problems,
                  moreProblems: status.moreProblems)
    }
}
