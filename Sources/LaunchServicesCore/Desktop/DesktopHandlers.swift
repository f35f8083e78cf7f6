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
    /// The types indexed (`x-scheme-handler/` by default); others are looked up entry by entry.
    public let typePrefix: String
    /// For each ID, the first folder that has a file with it: it owns the ID.
    let owner: [String: Int]
    /// For each folder, its entries declaring each type, in ID (byte) order, with the file and
    /// line of the `MimeType` that declares it.
    let declaring: [[String: [Declaration]]]

    /// An entry's declaration of a type.
    struct Declaration {
        var id: String
        var file: String
        var line: Int
    }

    public init(layout: DesktopLayout, rules: DesktopRules = .launchServices, typePrefix: String = "x-scheme-handler/") {
        self.layout = layout
        self.rules = rules
        self.typePrefix = typePrefix
        var owner: [String: Int] = [:]
        var declaring: [[String: [Declaration]]] = []
        for (index, folder) in layout.folders.enumerated() {
            for id in folder.entries.keys where owner[id] == nil { owner[id] = index }
            declaring.append(Self.declarations(in: folder, prefix: typePrefix, exactly: nil))
        }
        self.owner = owner
        self.declaring = declaring
    }

    /// `x-scheme-handler/SCHEME`, the scheme ASCII-lowercased as GLib does for a URL.
    public static func mimeType(forScheme scheme: String) -> String {
        "x-scheme-handler/" + String(decoding: scheme.utf8.map(KeyFileParser.lowercased), as: UTF8.self)
    }

    /// The chosen entry for a scheme, and nothing more: the candidates after it are not
    /// looked at (for every scheme at once; `choice` explains one).
    public func chosen(forScheme scheme: String) -> DesktopCandidate? {
        decide(Self.mimeType(forScheme: scheme), rules: rules, complete: false).chosen
    }

    /// The choice for `x-scheme-handler/SCHEME`, every candidate explained.
    public func choice(forScheme scheme: String, comparingWithGLib: Bool = false) -> DesktopChoice {
        choice(for: Self.mimeType(forScheme: scheme), comparingWithGLib: comparingWithGLib)
    }

    /// The choice for `type`; with `comparingWithGLib`, also what GLib 2.74 would choose when
    /// it differs, and which deviations make the difference.
    public func choice(for type: String, comparingWithGLib: Bool = false) -> DesktopChoice {
        var choice = decide(type, rules: rules, complete: true)
        guard comparingWithGLib, !rules.deviations.isEmpty else { return choice }
        let glib = decide(type, rules: .glib, complete: false).chosenID
        guard glib != choice.chosenID else { return choice }
        var responsible = DesktopDeviation.allCases.filter {
            rules.contains($0) && decide(type, rules: DesktopRules([$0]), complete: false).chosenID != glib
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

    /// The choice under `rules`; `complete` tries every candidate (for the explanation),
    /// otherwise the walk stops at the chosen one.
    func decide(_ type: String, rules: DesktopRules, complete: Bool) -> DesktopChoice {
        var notes: [String] = []
        var dropped: [(Named, by: DesktopSource)] = []
        let tweaks = layout.folders.indices.map { collect(type, folder: $0, rules: rules, notes: &notes, dropped: &dropped) }

        var defaults: [Named] = []
        var defaultIDs = Set<String>()
        for named in tweaks.flatMap({ $0.defaults ?? [] }) where defaultIDs.insert(named.id).inserted {
            defaults.append(named)
        }
        var associations: [Named] = []
        var associated = Set<String>()
        var blocklist: [String: DesktopSource] = [:]
        var shadowed: [(Named, owner: Int)] = []
        for (index, folder) in tweaks.enumerated() {
            for named in folder.additions ?? [] {
                if let owner = owner[named.id], owner < index {
                    shadowed.append((named, owner))
                } else if let blocker = blocklist[named.id] {
                    dropped.append((named, blocker))
                } else if associated.insert(named.id).inserted {
                    associations.append(named)
                }
            }
            for named in folder.removals ?? [] {
                let owned = owner[named.id].map { $0 < index } ?? false
                if !owned && blocklist[named.id] == nil && !associated.contains(named.id) {
                    blocklist[named.id] = named.source
                }
            }
        }
        let order = defaults + associations.filter { !defaultIDs.contains($0.id) }
        return walk(type, order: order, associated: associated, dropped: dropped, shadowed: shadowed,
                    rules: rules, notes: notes, complete: complete)
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
        if fromEntries, folder.kind == .data, let declarations = declaring(type, in: index) {
            let named = declarations.map { Named(id: $0.id, source: source(.mimeType, $0.file, $0.line)) }
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
        var present = Set(current.map(\.id))
        var blocked: [String: DesktopSource] = [:]
        for named in blocklist ?? [] where blocked[named.id] == nil { blocked[named.id] = named.source }
        for item in items {
            if let blocker = blocked[item.id] {
                dropped.append((item, blocker))
            } else if present.insert(item.id).inserted {
                current.append(item)
            }
        }
        list = current
    }

    /// Folder `index`'s entries declaring `type`, in ID (byte) order: from the index, or for a
    /// type outside `typePrefix`, entry by entry.
    func declaring(_ type: String, in index: Int) -> [Declaration]? {
        if type.hasPrefix(typePrefix) { return declaring[index][type] }
        return Self.declarations(in: layout.folders[index], prefix: type, exactly: type)[type]
    }

    /// What update-desktop-database would list in `folder`'s cache, for types beginning with
    /// `prefix` (or only `exactly` one): each type's IDs, one per ID, by byte order — also the
    /// types of a file whose ID another file of the folder took.
    static func declarations(in folder: DesktopLayout.Folder, prefix: String, exactly: String?) -> [String: [Declaration]] {
        var types: [String: [String: Declaration]] = [:]
        for file in folder.sameIDFiles + Array(folder.entries.values) {
            guard case .success(let entry) = file.content else { continue }
            for type in entry.declaredTypes(withPrefix: prefix) where exactly == nil || type == exactly {
                let declaration = Declaration(id: file.id, file: file.path, line: entry.line(of: "MimeType") ?? 0)
                // The entry's own declaration is the one shown, when it has one.
                types[type, default: [:]][file.id] = declaration
            }
        }
        return types.mapValues { byID in
            byID.values.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        }
    }

    func source(_ kind: DesktopSource.Kind, _ file: String, _ line: Int) -> DesktopSource {
        DesktopSource(kind: kind, file: file, shownFile: layout.shown(file), line: line)
    }
}
