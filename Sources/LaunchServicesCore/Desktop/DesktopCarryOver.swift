/// A place the reader could not read now for a reason the system gave (out of file
/// descriptors, an I/O error, permissions) — not one that is simply not there, too large or
/// malformed, which are the user's doing and count as what they are.
public struct DesktopUnreadable: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// An `applications` folder or a folder below one: its listing failed, wholly or in part.
        case folder
        /// A `*.desktop` file.
        case entry
        /// An association file (`mimeapps.list`, `defaults.list`, `mimeinfo.cache`, …).
        case list
    }

    public var kind: Kind
    public var path: String
    /// The system's words, e.g. `Permission denied`.
    public var reason: String

    public init(kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    public var description: String {
        let what = switch kind {
        case .folder: "desktop entries folder"
        case .entry: "desktop entry"
        case .list: "association file"
        }
        return TerminalText.escapingControls("\(what) \(path) could not be read (\(reason))")
    }
}

extension DesktopLayout {
    /// This read, with what it could not read now taken as `previous` had it: a folder,
    /// entry or association file that could not be read is not evidence that anything in it
    /// left (the apps folders' rule: a scan at the descriptor limit once withdrew every
    /// app). An entry under an unreadable folder that this read did not find is kept from
    /// `previous`, and so are the association files of a folder that could not be opened; an
    /// unreadable entry or list is replaced by `previous`'s, when it had one.
    /// Programs looked up for `previous` stay known. Nothing else changes: what this read did
    /// see wins.
    public func carryingOver(_ unreadable: [DesktopUnreadable], from previous: DesktopLayout) -> DesktopLayout {
        guard !unreadable.isEmpty else { return self }
        var layout = self
        var before: [String: Folder] = [:]
        for folder in previous.folders where before[folder.path] == nil { before[folder.path] = folder }
        for index in layout.folders.indices {
            let path = layout.folders[index].path
            guard let old = before[path] else { continue }
            var folder = layout.folders[index]
            let here = unreadable.filter { $0.path == path || $0.path.hasPrefix(path + "/") }
            guard !here.isEmpty else { continue }
            for place in here {
                switch place.kind {
                case .list:
                    guard let kept = old.lists.first(where: { $0.path == place.path }) else { continue }
                    if let at = folder.lists.firstIndex(where: { $0.path == place.path }) {
                        folder.lists[at] = kept
                    } else {
                        folder.lists.append(kept)
                    }
                case .entry:
                    guard let kept = old.entries.values.first(where: { $0.path == place.path }) else { continue }
                    if let current = folder.entries[kept.id], current.path != place.path { continue }
                    folder.entries[kept.id] = kept
                case .folder:
                    let inside = place.path + "/"
                    for (id, kept) in old.entries where kept.path.hasPrefix(inside) && folder.entries[id] == nil {
                        folder.entries[id] = kept
                    }
                    // The folder itself: its association files were not read either.
                    if place.path == path {
                        for kept in old.lists where !folder.lists.contains(where: { $0.path == kept.path }) { folder.lists.append(kept) }
                    }
                }
            }
            // In the order GLib reads them.
            let order = folder.plannedLists(desktops: layout.currentDesktops).map(\.path)
            folder.lists.sort { (order.firstIndex(of: $0.path) ?? order.count) < (order.firstIndex(of: $1.path) ?? order.count) }
            layout.folders[index] = folder
        }
        layout.programs.merge(previous.programs) { now, _ in now }
        return layout
    }
}
