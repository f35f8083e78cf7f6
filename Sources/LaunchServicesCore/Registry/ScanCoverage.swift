/// What one scan of the apps folders could read, and so what it may withdraw.
///
/// A folder app is withdrawn only on evidence that it left: the folder it sits in was read
/// in full (or is not there at all) and no longer holds it. A folder or a bundle that could
/// not be read right now — the descriptor limit, memory, an I/O error, permissions — is no
/// such evidence: at the descriptor limit a rescan once found every folder "empty" and
/// unregistered every folder app, losing their registration times. What was registered from
/// it stays as it was until a later scan reads it.
public struct ScanCoverage: Sendable, Equatable {
    /// The apps folders listed in full or found not there (nothing in them), each as given
    /// (without a trailing `/`) and, where it resolves, canonical.
    public var readFolders: Set<String>
    /// The folders and bundles the scan could not read, in scan order.
    public var unreadable: [UnreadablePath]

    public init(readFolders: Set<String> = [], unreadable: [UnreadablePath] = []) {
        self.readFolders = readFolders
        self.unreadable = unreadable
    }

    /// Whether the scan read everything: then what it did not find is gone.
    public var isComplete: Bool { unreadable.isEmpty }

    /// Whether the scan saw the folder app at `path` (canonical, as registered) gone — or,
    /// for a bundle it found elsewhere under the same id, replaced. True when the scan is
    /// complete; otherwise only when the folder the bundle sits directly in was read and the
    /// bundle itself was not unreadable. A bundle in no folder the scan read in full (a link
    /// in an apps folder to a bundle elsewhere, whose link may sit in the folder that could not
    /// be read) is kept until a complete scan.
    public func sawGone(bundleAt path: String) -> Bool {
        guard !isComplete else { return true }
        let parent = Self.parent(of: path)
        for place in unreadable {
            switch place.kind {
            case .bundle where place.path == path || place.canonicalPath == path: return false
            case .appsFolder where place.path == parent || place.canonicalPath == parent: return false
            default: continue
            }
        }
        return readFolders.contains(parent)
    }

    /// `path` without its last component (`/` for a top-level path).
    static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

/// An apps folder or a bundle a scan could not read right now, and why (the system's words).
/// Not a refusal: nothing is known about what it holds, so nothing of it changes.
public struct UnreadablePath: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case appsFolder
        case bundle
    }

    public var kind: Kind
    /// As the scan met it: the apps folder as configured, or `folder/entry`.
    public var path: String
    /// With symbolic links resolved, when that worked.
    public var canonicalPath: String?
    /// What could not be read and the system's reason, e.g. `Too many open files` or
    /// `Info.plist: Input/output error`.
    public var reason: String

    public init(kind: Kind, path: String, canonicalPath: String? = nil, reason: String) {
        self.kind = kind
        self.path = path
        self.canonicalPath = canonicalPath
        self.reason = reason
    }

    /// Control characters escaped: a file name in an apps folder can hold any byte.
    public var description: String {
        TerminalText.escapingControls("\(kind == .appsFolder ? "apps folder" : "bundle") \(path) could not be read (\(reason))")
    }
}
