import LaunchServicesCore

/// A `DesktopLayout` written by hand for the choice's unit tests: folders in GLib's order
/// with their files as text, parsed by the same Core readers the daemon's edge uses.
struct DesktopLayoutFixture {
    var home = "/home/u"
    var desktops: [String] = []
    /// Programs on PATH (by name) or executable files (by path).
    var installed: Set<String> = ["prog", "other", "/opt/tool/run"]
    var folders: [DesktopLayout.Folder] = []

    /// A configuration folder with association files by name.
    mutating func config(_ path: String, _ lists: [String: String] = [:]) {
        folders.append(folder(.config, path, lists: lists, entries: [:]))
    }

    /// A data folder's `applications` with association files and entries by relative path
    /// (in the order given, which is the folder listing's). Unless `lists` has one or
    /// `cache` is false, its `mimeinfo.cache` is what update-desktop-database would write.
    mutating func data(_ path: String, lists: [String: String] = [:], entries: KeyValuePairs<String, String> = [:], cache: Bool = true) {
        var lists = lists
        if cache && lists["mimeinfo.cache"] == nil {
            var types: [String: Set<String>] = [:]
            for (relative, text) in entries {
                guard let entry = try? DesktopEntry(parsing: text) else { continue }
                for type in entry.declaredTypes { types[type, default: []].insert(DesktopFileID.id(forRelativePath: relative)) }
            }
            lists["mimeinfo.cache"] = "[MIME Cache]\n" + types.sorted { $0.key < $1.key }.map { type, ids in
                type + "=" + ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { $0 + ";" }.joined()
            }.joined(separator: "\n") + "\n"
        }
        folders.append(folder(.data, path, lists: lists, entries: entries))
    }

    func folder(_ kind: DesktopLayout.Folder.Kind, _ path: String, lists: [String: String], entries: KeyValuePairs<String, String>) -> DesktopLayout.Folder {
        var folder = DesktopLayout.Folder(kind: kind, path: path)
        for (listPath, listKind) in folder.plannedLists(desktops: desktops) {
            guard let text = lists[String(listPath.dropFirst(path.count + 1))] else { continue }
            let content: Result<MimeAppsList, AssociationListError>
            do {
                content = .success(try MimeAppsList(parsing: text))
            } catch {
                content = .failure(.malformed(error))
            }
            folder.lists.append(DesktopLayout.AssociationList(kind: listKind, path: listPath, content: content))
        }
        let (byID, collisions) = DesktopFileID.index(entries.map(\.key))
        let texts = Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        func file(_ id: String, _ relative: String) -> DesktopLayout.EntryFile {
            let content: Result<DesktopEntry, DesktopEntryError>
            do {
                content = .success(try DesktopEntry(parsing: texts[relative]!))
            } catch {
                content = .failure(error)
            }
            return DesktopLayout.EntryFile(id: id, path: path + "/" + relative, content: content)
        }
        for (id, relative) in byID { folder.entries[id] = file(id, relative) }
        folder.sameIDFiles = collisions.map { file($0.id, $0.relativePath) }
        return folder
    }

    func layout() -> DesktopLayout {
        var programs: [String: ProgramLookup] = [:]
        for folder in folders {
            for file in Array(folder.entries.values) + folder.sameIDFiles {
                guard case .success(let entry) = file.content else { continue }
                for program in DesktopEntryCheck.programsToFind(entry) {
                    programs[program] = installed.contains(program) ? .found(program.contains("/") ? program : "/usr/bin/" + program) : .notFound
                }
            }
        }
        return DesktopLayout(home: home, currentDesktops: desktops, folders: folders, programs: programs, searchPath: "/usr/bin:/bin")
    }

    func choice(_ scheme: String = "web", rules: DesktopRules = .launchServices) -> DesktopChoice {
        DesktopHandlers(layout: layout(), rules: rules).choice(forScheme: scheme, comparingWithGLib: true)
    }

    /// The IDs chosen under GLib's rules and under this daemon's.
    func chosen(_ scheme: String = "web") -> (glib: String?, ours: String?) {
        (choice(scheme, rules: .glib).chosenID, choice(scheme).chosenID)
    }

    /// A desktop entry's text.
    static func entry(exec: String? = "prog %u", types: [String] = ["x-scheme-handler/web"], _ extra: String = "") -> String {
        var lines = ["[Desktop Entry]", "Type=Application", "Name=An app"]
        if let exec { lines.append("Exec=\(exec)") }
        lines.append("MimeType=" + types.map { $0 + ";" }.joined())
        if !extra.isEmpty { lines.append(extra) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The standard folders of `home`: config home, /etc/xdg, data home, /usr/share.
    static let configHome = "/home/u/.config"
    static let configDir = "/etc/xdg"
    static let dataHome = "/home/u/.local/share/applications"
    static let dataDir = "/usr/share/applications"
}
