import LaunchServicesProtocol

// What `lsctl explain` and `lsctl default` print for a person (with --json, the daemon's
// `ExplainReport` is printed as it came).

/// Prints an explanation document (explain, default) for a person: the handler and why, the
/// other claims, and how the desktop entries chose among themselves, to the line.
func printExplanation(_ e: ExplainReport) {
    let desktopFile = e.isDesktop ? e.desktop?.candidates.first { $0.id == e.app && $0.isUsable }?.file : nil
    printEscaped("\(e.url) → \(e.app ?? "no app")\(e.isDesktop ? " (desktop entry\(desktopFile.map { ", \($0)" } ?? ""))" : "")")
    printEscaped("  why: \(e.why)")
    if let kind = e.kind { printEscaped("  kind: \(kind) (CFBundleURLName)") }
    if e.isDesktop, let decidedBy = e.desktop?.decidedBy, e.desktop?.chosen == e.app { printEscaped("  decided by: \(decidedBy.text)") }
    if let held = e.claims.first(where: { $0.app == e.app }) {
        printEscaped(held.isDesktop ? "  handled by desktop entries since: \(held.since)" : "  registered since: \(held.since)")
    }
    if !e.claims.isEmpty {
        let others = e.claims.filter { $0.app != e.app }
        if !others.isEmpty {
            printEscaped("  also claimed by: \(others.map { "\($0.app) (\($0.isDesktop ? "desktop entry, " : "")since \($0.since))" }.joined(separator: ", "))")
        }
    } else if e.claimants.count > 1 {
        printEscaped("  also claimed by: \(e.claimants.filter { $0 != e.app }.joined(separator: ", "))")
    }
    if let chosen = e.userDefault, chosen != e.app {
        let lost = e.desktop?.candidates.first { $0.id == chosen && !$0.isUsable }
        printEscaped("  user default: \(chosen) (\(lost?.reasonText.map { "not a usable handler now: \($0)" } ?? "not a claimant now"), so ignored)")
    }
    for refused in e.refusedClaims { printEscaped("  refused bundle declaring it: \(refused.path): \(refused.reason)") }
    if let desktop = e.desktop { printDesktopChoice(desktop) }
}

/// How the desktop entries chose for the scheme: the choice and the line that made it, then
/// every candidate in the order tried, with why it lost.
func printDesktopChoice(_ d: DesktopChoiceReport) {
    guard !d.candidates.isEmpty || !d.notes.isEmpty else {
        return printEscaped("  desktop entries: none lists \(d.mimeType) (in MimeType or a mimeapps.list)")
    }
    if let chosen = d.chosen, let decidedBy = d.decidedBy {
        printEscaped("  desktop entries (\(d.mimeType)): \(chosen), decided by \(decidedBy.text)")
    } else {
        printEscaped("  desktop entries (\(d.mimeType)): none can open it")
    }
    for (index, candidate) in d.candidates.enumerated() {
        var line = "    \(index + 1). \(candidate.id): "
        line += candidate.verdict == "chosen" ? "chosen" : "lost: \(candidate.reasonText ?? candidate.reason ?? "?")"
        line += " (\(candidate.source.text))"
        if !candidate.skipped.isEmpty { line += "; skipped " + candidate.skipped.joined(separator: "; ") }
        printEscaped(line)
    }
    for note in d.notes { printEscaped("    note: \(note)") }
}
