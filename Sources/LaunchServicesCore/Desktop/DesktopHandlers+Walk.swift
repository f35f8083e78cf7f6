/// Step 3 of the choice: the candidates tried in order, each ID's files folder by folder, and
/// the explanation of every candidate's fate.
extension DesktopHandlers {
    /// What trying one ID gave: the file that decided, the same-ID files stepped over, and
    /// whether it is usable (nil) or the defect that stops it.
    struct Trial {
        var file: DesktopLayout.EntryFile?
        var skipped: [SkippedFile]
        var defect: LossReason?
    }

    /// Tries the files with `id`, in folder order, as GLib does.
    func trial(_ id: String, rules: DesktopRules) -> Trial {
        var skipped: [SkippedFile] = []
        var first: (file: DesktopLayout.EntryFile, defect: EntryDefect)?
        for folder in layout.folders where folder.kind == .data {
            guard let file = folder.entries[id] else { continue }
            if let defect = DesktopEntryCheck.glibDefect(file, programs: layout.programs, searchPath: layout.searchPath) {
                if first == nil {
                    first = (file, defect)
                } else {
                    skipped.append(SkippedFile(file: layout.shown(file.path), defect: defect))
                }
                continue
            }
            let stepped = first.map { [SkippedFile(file: layout.shown($0.file.path), defect: $0.defect)] + skipped } ?? skipped
            if let extra = DesktopEntryCheck.extraDefect(file, rules: rules) {
                return Trial(file: file, skipped: stepped, defect: .defect(extra))
            }
            return Trial(file: file, skipped: stepped, defect: nil)
        }
        guard let first else { return Trial(file: nil, skipped: [], defect: .noSuchEntry) }
        return Trial(file: first.file, skipped: skipped, defect: .defect(first.defect))
    }

    func walk(_ type: String, order: [Named], associated: Set<String>, dropped: [(Named, by: DesktopSource)],
              shadowed: [(Named, owner: Int)], rules: DesktopRules, notes: [String], complete: Bool) -> DesktopChoice {
        var candidates: [DesktopCandidate] = []
        var chosen: String?
        var differences: [SpecDifference] = []
        for named in order {
            if chosen != nil && !complete { break }
            let trial = trial(named.id, rules: rules)
            let verdict: DesktopCandidate.Verdict
            if let defect = trial.defect {
                verdict = .lost(defect)
            } else if let winner = chosen {
                verdict = .lost(.outranked(by: winner))
            } else {
                verdict = .chosen
                chosen = named.id
                differences = specDifferences(named, trial: trial, associated: associated)
            }
            candidates.append(DesktopCandidate(id: named.id, source: named.source, entry: trial.file, shownFile: trial.file.map { layout.shown($0.path) },
                                               skipped: trial.skipped, verdict: verdict))
        }
        guard complete else { return DesktopChoice(mimeType: type, candidates: candidates, notes: notes, specDifferences: differences) }
        var listed = Set(order.map(\.id))
        for (named, source) in dropped where listed.insert(named.id).inserted {
            candidates.append(DesktopCandidate(id: named.id, source: named.source, verdict: .lost(.removed(by: source))))
        }
        for (named, owner) in shadowed where listed.insert(named.id).inserted {
            let file = layout.folders[owner].entries[named.id].map { layout.shown($0.path) } ?? layout.shown(layout.folders[owner].path)
            candidates.append(DesktopCandidate(id: named.id, source: named.source, verdict: .lost(.shadowed(by: file))))
        }
        return DesktopChoice(mimeType: type, candidates: candidates, notes: notes, specDifferences: differences)
    }

    /// The GLib rules that departed from a spec in choosing `named`.
    func specDifferences(_ named: Named, trial: Trial, associated: Set<String>) -> [SpecDifference] {
        var differences: [SpecDifference] = []
        if named.source.kind == .defaultApplications {
            if !associated.contains(named.id) { differences.append(.defaultNotAssociated(id: named.id)) }
            if named.source.file.hasSuffix("/defaults.list") { differences.append(.defaultsList(path: named.source.shownFile)) }
        }
        if let from = trial.skipped.first, let to = trial.file {
            differences.append(.fellThrough(id: named.id, from: from.file, to: layout.shown(to.path)))
        }
        return differences
    }
}
