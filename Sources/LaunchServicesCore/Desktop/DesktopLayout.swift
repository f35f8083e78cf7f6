/// Everything choosing a desktop handler looks at, read from disk by the daemon's edge and
/// held here as a plain value, so the choice is a pure function of it.
///
/// `folders` are GLib's list of places, in its order of precedence: `$XDG_CONFIG_HOME`, each
/// of `$XDG_CONFIG_DIRS`, then `$XDG_DATA_HOME/applications` and each of
/// `$XDG_DATA_DIRS/applications`. Each holds the association files found there, in the order
/// GLib reads them (`plannedLists`), and — for a data folder — its desktop entries by ID.
/// `programs` answers "is this program installed" for every program an entry names (`TryExec`,
/// `Exec`'s first word), found on `searchPath` by the edge.
public struct DesktopLayout: Sendable, Equatable {
    public struct Folder: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// A configuration folder: association files only.
            case config
            /// A data folder's `applications`: association files, a cache, desktop entries.
            case data
        }

        public var kind: Kind
        public var path: String
        /// The association files that exist, in GLib's reading order.
        public var lists: [AssociationList]
        /// The desktop entries by ID (every `*.desktop` found, readable or not: an ID hides
        /// the same ID in later folders whatever its file holds).
        public var entries: [String: EntryFile]
        /// Files whose ID another file of this folder took (`kde-a.desktop` and
        /// `kde/a.desktop`): not entries, but update-desktop-database still lists their types
        /// under the ID in the folder's cache.
        public var sameIDFiles: [EntryFile]

        public init(kind: Kind, path: String, lists: [AssociationList] = [], entries: [String: EntryFile] = [:],
                    sameIDFiles: [EntryFile] = []) {
            self.kind = kind
            self.path = path
            self.lists = lists
            self.entries = entries
            self.sameIDFiles = sameIDFiles
        }

        /// The association files GLib reads in this folder, in its order: each desktop's
        /// `$desktop-mimeapps.list`, then `mimeapps.list`; in a data folder then
        /// `defaults.list` (never in a spec; GLib still reads its defaults) and the
        /// `mimeinfo.cache` update-desktop-database writes.
        public func plannedLists(desktops: [String]) -> [(path: String, kind: AssociationList.Kind)] {
            var planned = desktops.map { (XDGBaseDirectories.join(path, "\($0)-mimeapps.list"), AssociationList.Kind.desktopSpecific($0)) }
            planned.append((XDGBaseDirectories.join(path, "mimeapps.list"), .mimeapps))
            if kind == .data {
                planned.append((XDGBaseDirectories.join(path, "defaults.list"), .defaultsList))
                planned.append((XDGBaseDirectories.join(path, "mimeinfo.cache"), .mimeinfoCache))
            }
            return planned
        }
    }

    /// An association file found in a folder: read, or why it could not be.
    public struct AssociationList: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// `$desktop-mimeapps.list`: only its defaults count.
            case desktopSpecific(String)
            /// `mimeapps.list`: defaults, added and removed associations.
            case mimeapps
            /// `defaults.list` (data folders): only its defaults count.
            case defaultsList
            /// `mimeinfo.cache` (data folders): `[MIME Cache]` lists the entries declaring each type.
            case mimeinfoCache

            /// Whether `[Added Associations]` and `[Removed Associations]` count here.
            public var allowsAssociations: Bool {
                switch self {
                case .mimeapps, .mimeinfoCache: return true
                case .desktopSpecific, .defaultsList: return false
                }
            }
        }

        public var kind: Kind
        public var path: String
        public var content: Result<MimeAppsList, AssociationListError>

        public init(kind: Kind, path: String, content: Result<MimeAppsList, AssociationListError>) {
            self.kind = kind
            self.path = path
            self.content = content
        }
    }

    /// One desktop entry file: its ID, where it is, and what reading it gave.
    public struct EntryFile: Sendable, Equatable {
        public var id: String
        public var path: String
        public var content: Result<DesktopEntry, DesktopEntryError>

        public init(id: String, path: String, content: Result<DesktopEntry, DesktopEntryError>) {
            self.id = id
            self.path = path
            self.content = content
        }
    }

    /// The user's home folder: paths under it are shown as `~/…`.
    public var home: String
    public var currentDesktops: [String]
    public var folders: [Folder]
    /// Every program looked up, by the name the entry gives (`firefox`, `/opt/x/run`).
    public var programs: [String: ProgramLookup]
    /// The `PATH` programs were looked up on (for explanations).
    public var searchPath: String
    /// What the edge could not read or would not (bounds), one line each.
    public var notes: [String]

    public init(home: String, currentDesktops: [String] = [], folders: [Folder], programs: [String: ProgramLookup] = [:],
                searchPath: String = "", notes: [String] = []) {
        self.home = home
        self.currentDesktops = currentDesktops
        self.folders = folders
        self.programs = programs
        self.searchPath = searchPath
        self.notes = notes
    }

    /// The folders of `directories`, in GLib's order, with nothing read yet.
    public static func folders(of directories: XDGBaseDirectories) -> [Folder] {
        [directories.configHome].map { Folder(kind: .config, path: $0) }
            + directories.configDirs.map { Folder(kind: .config, path: $0) }
            + ([directories.dataHome] + directories.dataDirs).map { Folder(kind: .data, path: XDGBaseDirectories.join($0, "applications")) }
    }

    /// `path` with the home folder shown as `~`.
    public func shown(_ path: String) -> String {
        guard home.count > 1, path.hasPrefix(home + "/") else { return path }
        return "~" + path.dropFirst(home.count)
    }
}

/// Whether a program an entry names was found, and where.
public enum ProgramLookup: Sendable, Equatable {
    case found(String)
    case notFound
}

/// Why an association file that exists gives nothing.
public enum AssociationListError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(KeyFileError)
    case unreadable(String)

    public var description: String {
        switch self {
        case .malformed(let error): return "not a valid key file: \(error)"
        case .unreadable(let reason): return "could not be read: \(reason)"
        }
    }
}
