/// Which rules choose a desktop handler: GLib 2.74's, plus the deviations this daemon takes
/// where GLib's answer could not or must not be launched, or where it ignores what the user or
/// the spec says through an accident of its implementation. Every deviation is named, with its
/// reason, and `lsctl explain` says when one changed the answer (and what GLib would choose).
public struct DesktopRules: Sendable, Hashable {
    public var deviations: Set<DesktopDeviation>

    public init(_ deviations: Set<DesktopDeviation>) {
        self.deviations = deviations
    }

    /// Exactly GLib 2.74 (what `gio mime x-scheme-handler/S` prints).
    public static let glib = DesktopRules([])
    /// This daemon's rules: GLib's with every deviation.
    public static let launchServices = DesktopRules(Set(DesktopDeviation.allCases))

    public func contains(_ deviation: DesktopDeviation) -> Bool { deviations.contains(deviation) }
}

/// Where this daemon's choice departs from GLib 2.74's, and why.
public enum DesktopDeviation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// GLib chooses a `Hidden=true` entry that a `[Default Applications]` or
    /// `[Added Associations]` line names. The Desktop Entry spec: Hidden means the entry is
    /// deleted (GLib's own lists of apps leave it out; only its default lookup does not).
    case hiddenIsNoHandler
    /// The entry `lsctl export-xdg` writes runs `lsopen`: chosen, it would send the URL back
    /// to this daemon.
    case ownExportNeverChosen
    /// GLib reads an entry's `MimeType` only through its folder's `mimeinfo.cache`, so an entry
    /// the cache does not list yet (update-desktop-database not run since) is no handler to
    /// GLib, and one it still lists after its `MimeType` changed is. Here the entry's own
    /// `MimeType` decides (the Desktop Entry spec: the cache is only a cache), in the cache's
    /// order (by desktop file ID, as update-desktop-database writes it), so a current cache
    /// gives GLib's answer.
    case mimeTypeFromEntries
    /// GLib chooses an `Application` with no `Exec` (and not D-Bus activatable), then fails
    /// to launch it; the spec requires `Exec`. Here it is no handler, and the next one is used.
    case nothingToRunIsNoHandler
    /// A `[Removed Associations]` line removes the association of an entry in the same folder
    /// (the mime-apps spec: removals apply to the current folder and later ones). GLib 2.74
    /// applies it only when that folder's `mimeapps.list` also adds some entry for the type.
    case sameFolderRemovalApplies

    public var description: String {
        switch self {
        case .hiddenIsNoHandler:
            return "a Hidden=true entry is no handler (the Desktop Entry spec: hidden means deleted); GLib 2.74 still chooses one a mimeapps.list names"
        case .ownExportNeverChosen:
            return "the entry lsctl export-xdg writes for lsopen is never chosen (it would send the URL back here); GLib sees an ordinary entry"
        case .mimeTypeFromEntries:
            return "an entry's own MimeType decides (the Desktop Entry spec); GLib 2.74 reads MimeType only through the folder's mimeinfo.cache, which may be missing or out of date"
        case .nothingToRunIsNoHandler:
            return "an Application with no Exec (and not DBusActivatable) is no handler; GLib 2.74 chooses it and then fails to launch it"
        case .sameFolderRemovalApplies:
            return "[Removed Associations] also removes entries of its own folder (the mime-apps spec); GLib 2.74 does so only when that mimeapps.list also adds an entry for the type"
        }
    }
}

/// Where GLib's rule, which this daemon follows, departs from the specs, named where it
/// decided a choice so that an explanation (and the differential test) can say so.
public enum SpecDifference: Sendable, Equatable, CustomStringConvertible {
    /// Chosen from `[Default Applications]` although not associated with the type (or its
    /// association removed): the mime-apps spec 1.0.1 wants a default "installed and
    /// associated"; GLib (and `xdg-mime default`, which writes only that line) do not.
    case defaultNotAssociated(id: String)
    /// The first folder's file with this ID could not be loaded, and GLib used a later
    /// folder's file with the same ID; the Desktop Entry spec gives the ID to the first.
    case fellThrough(id: String, from: String, to: String)
    /// Decided by a `defaults.list`, a file no spec defines that GLib still reads.
    case defaultsList(path: String)

    public var name: String {
        switch self {
        case .defaultNotAssociated: return "default-not-associated"
        case .fellThrough: return "fell-through-to-later-folder"
        case .defaultsList: return "defaults.list"
        }
    }

    public var description: String {
        switch self {
        case .defaultNotAssociated(let id):
            return "\(id) is a default without being associated with the type: GLib chooses it (the mime-apps spec 1.0.1 would not)"
        case .fellThrough(let id, let from, let to):
            return "\(from) cannot be loaded, so GLib uses \(to) for \(id) (the Desktop Entry spec gives the ID to the first folder)"
        case .defaultsList(let path):
            return "decided by \(path), a defaults.list: no spec defines it, GLib reads it"
        }
    }
}
