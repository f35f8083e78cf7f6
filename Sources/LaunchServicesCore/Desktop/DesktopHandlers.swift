/// Chooses the desktop entry for a MIME type in a `DesktopLayout` as GLib 2.74's
/// `g_app_info_get_default_for_type` does (the function behind `gio mime` and `gio open`),
/// with the deviations `rules` names, and explains every candidate.
///
/// GLib's algorithm, learnt from its source and checked against `gio mime` by the
/// differential test:
///
/// 1. Each folder collects, for the type, from its association files in order: defaults
///    (`[Default Applications]`), additions (`[Added Associations]`, only in `mimeapps.list`;
///    then the folder's `mimeinfo.cache`) and removals (`[Removed Associations]`, only in
///    `mimeapps.list`). A list added to a folder's additions or removals drops the IDs the
///    folder's other list already holds — except the first list added, which is taken as it
///    is (hence a same-folder removal does not touch the cache unless the folder also adds).
/// 2. The candidates are every folder's defaults, in folder order, then every folder's
///    additions: an addition counts unless an earlier folder has a file with that ID (it
///    belongs to that folder), or an earlier (or the same, earlier-read) folder removed it; a
///    removal counts unless the ID is already a candidate. So ties between entries that
///    declare the type in one folder go to the smallest desktop file ID (the cache's order).
/// 3. The first candidate that loads wins: for its ID, each data folder in order that has a
///    file with the ID is tried, and the first that loads (`DesktopEntryCheck.glibDefect`)
///    is used — GLib falls through to a later folder's file when the first cannot load, and
///    does not check `Hidden` here. No candidate loading means no default.
///
/// MIME aliases and parent types (shared-mime-info) are not modelled: none exist for
/// `x-scheme-handler/*`.
public struct DesktopHandlers: Sendable {
    public let layout: DesktopLayout
    public let rules: DesktopRules
    /// For each ID, the first folder that has a file with it: it owns the ID.
    let owner: [String: Int]
    /// For each folder, the IDs of its entries declaring each type, in ID (byte) order.
    let declaring: [[String: [String]]]

    public init(layout: DesktopLayout, rules: DesktopRules = .launchServices) {
        self.layout = layout
        self.rules = rules
        var owner: [String: Int] = [:]
        var declaring: [[String: [String]]] = []
        for (index, folder) in layout.folders.enumerated() {
            var types: [String: Set<String>] = [:]
            for (id, file) in folder.entries where owner[id] == nil { owner[id] = index }
            // As update-desktop-database lists them: every file's types under its ID, also
            // those of a file whose ID another file of the folder took.
            for file in Array(folder.entries.values) + folder.sameIDFiles {
                guard case .success(let entry) = file.content else { continue }
                for type in entry.declaredTypes { types[type, default: []].insert(file.id) }
            }
            declaring.append(types.mapValues { $0.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } })
        }
        self.owner = owner
        self.declaring = declaring
    }

    /// The choice for `x-scheme-handler/SCHEME` (the scheme lowercased, as GLib does for a URL).
    public func choice(forScheme scheme: String, comparingWithGLib: Bool = false) -> DesktopChoice {
        choice(for: "x-scheme-handler/" + String(scheme.lowercased()), comparingWithGLib: comparingWithGLib)
    }

    /// The choice for `type`; with `comparingWithGLib`, also what GLib 2.74 would choose when
    /// it differs, and which deviations make the difference.
    public func choice(for type: String, comparingWithGLib: Bool = false) -> DesktopChoice {
        var choice = decide(type, rules: rules)
        guard comparingWithGLib, !rules.deviations.isEmpty else { return choice }
        let glib = decide(type, rules: .glib).chosenID
        guard glib != choice.chosenID else { return choice }
        var responsible = DesktopDeviation.allCases.filter {
            rules.contains($0) && decide(type, rules: DesktopRules([$0])).chosenID != glib
        }
        if responsible.isEmpty { responsible = DesktopDeviation.allCases.filter(rules.contains) }
        choice.glibDifference = GLibDifference(glibChoice: glib, deviations: responsible)
        return choice
    }

    /// Every scheme some file names (`x-scheme-handler/SCHEME`), as written, sorted.
    public var mentionedSchemes: [String] {
        let prefix = "x-scheme-handler/"
        var types = Set(declaring.flatMap(\.keys))
        for folder in layout.folders {
            for list in folder.lists {
                if case .success(let mime) = list.content { types.formUnion(mime.types) }
            }
        }
        return types.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.sorted()
    }

    /// One ID and the line that named it.
    struct Named {
        var id: String
        var source: DesktopSource
    }

    /// One folder's defaults, additions and removals for a type. Nil until a list is added:
    /// GLib takes the first list as it is.
    struct Tweaks {
        var defaults: [Named]?
        var additions: [Named]?
        var removals: [Named]?
    }

    func decide(_ type: String, rules: DesktopRules) -> DesktopChoice {
        var notes: [String] = []
        var dropped: [(Named, by: DesktopSource)] = []
        let tweaks = layout.folders.indices.map { collect(type, folder: $0, rules: rules, notes: &notes, dropped: &dropped) }

        var defaults: [Named] = []
        for named in tweaks.flatMap({ $0.defaults ?? [] }) where !defaults.contains(where: { $0.id == named.id }) {
            defaults.append(named)
        }
        var associations: [Named] = []
        var blocklist: [Named] = []
        var shadowed: [(Named, owner: Int)] = []
        for (index, folder) in tweaks.enumerated() {
            for named in folder.additions ?? [] {
                if let owner = owner[named.id], owner < index {
                    shadowed.append((named, owner))
                } else if let blocker = blocklist.first(where: { $0.id == named.id }) {
                    dropped.append((named, blocker.source))
                } else if !associations.contains(where: { $0.id == named.id }) {
                    associations.append(named)
                }
            }
            for named in folder.removals ?? [] {
                let owned = owner[named.id].map { $0 < index } ?? false
                if !owned && !blocklist.contains(where: { $0.id == named.id }) && !associations.contains(where: { $0.id == named.id }) {
                    blocklist.append(named)
                }
            }
        }
        let order = defaults + associations.filter { named in !defaults.contains { $0.id == named.id } }
        return walk(type, order: order, associated: Set(associations.map(\.id)), dropped: dropped, shadowed: shadowed,
                    rules: rules, notes: notes)
    }

    /// Reads one folder's association files for `type`, in GLib's order.
    func collect(_ type: String, folder index: Int, rules: DesktopRules, notes: inout [String],
                 dropped: inout [(Named, by: DesktopSource)]) -> Tweaks {
        let folder = layout.folders[index]
        var tweaks = Tweaks()
        let fromEntries = rules.contains(.mimeTypeFromEntries)
        let filterFirst = rules.contains(.sameFolderRemovalApplies)
        for list in folder.lists where !(fromEntries && list.kind == .mimeinfoCache) {
            let mime: MimeAppsList
            switch list.content {
            case .failure(let error):
                notes.append("\(layout.shown(list.path)) ignored: \(error)")
                continue
            case .success(let read):
                mime = read
            }
            let isCache = list.kind == .mimeinfoCache
            let groups: [(String, DesktopSource.Kind)] = [
                (isCache ? MimeAppsList.mimeCache : MimeAppsList.addedAssociations, isCache ? .mimeCache : .addedAssociations),
                (MimeAppsList.removedAssociations, .removedAssociations),
            ]
            for (group, kind) in groups {
                guard let found = mime.ids(in: group, for: type) else { continue }
                guard list.kind.allowsAssociations else {
                    notes.append("\(layout.shown(list.path)):\(found.line) [\(group)] ignored: only mimeapps.list may add or remove associations")
                    continue
                }
                let named = found.ids.map { Named(id: $0, source: source(kind, list.path, found.line)) }
                if kind == .removedAssociations {
                    Self.expand(&tweaks.removals, with: named, blocklist: tweaks.additions, filterFirst: false, dropped: &dropped)
                } else {
                    Self.expand(&tweaks.additions, with: named, blocklist: tweaks.removals, filterFirst: isCache && filterFirst, dropped: &dropped)
                }
            }
            if let found = mime.ids(in: MimeAppsList.defaultApplications, for: type) {
                let named = found.ids.map { Named(id: $0, source: source(.defaultApplications, list.path, found.line)) }
                Self.expand(&tweaks.defaults, with: named, blocklist: nil, filterFirst: false, dropped: &dropped)
            }
        }
        if fromEntries, folder.kind == .data, let ids = declaring[index][type] {
            let named = ids.compactMap { id -> Named? in
                let files = [folder.entries[id]].compactMap { $0 } + folder.sameIDFiles.filter { $0.id == id }
                for file in files {
                    guard case .success(let entry) = file.content, entry.declares(type) else { continue }
                    return Named(id: id, source: source(.mimeType, file.path, entry.line(of: "MimeType") ?? 0))
                }
                return nil
            }
            Self.expand(&tweaks.additions, with: named, blocklist: tweaks.removals, filterFirst: filterFirst, dropped: &dropped)
        }
        return tweaks
    }

    /// Adds `items` to `list` as GLib does: the first list is taken as it is (unless
    /// `filterFirst`); later ones skip IDs in `blocklist` (recorded in `dropped`) and IDs
    /// already there.
    static func expand(_ list: inout [Named]?, with items: [Named], blocklist: [Named]?, filterFirst: Bool,
                       dropped: inout [(Named, by: DesktopSource)]) {
        if list == nil && !filterFirst {
            list = items
            return
        }
        var current = list ?? []
        for item in items {
            if let blocker = blocklist?.first(where: { $0.id == item.id }) {
                dropped.append((item, blocker.source))
            } else if !current.contains(where: { $0.id == item.id }) {
                current.append(item)
            }
        }
        list = current
    }

    func source(_ kind: DesktopSource.Kind, _ file: String, _ line: Int) -> DesktopSource {
        DesktopSource(kind: kind, file: file, shownFile: layout.shown(file), line: line)
    }
}
