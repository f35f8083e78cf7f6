import LaunchServicesCore
import LaunchServicesProtocol

/// What `lsctl status` can say of the desktop entries: whether they are read, how many, from
/// where, when last, and what could not be read or was skipped. Bounded: at most
/// `maximumProblems` problems are listed, the rest counted.
package struct DesktopEntriesStatus: Sendable, Equatable, Encodable {
    package static let maximumProblems = 20

    /// `desktopEntries.enabled`.
    package var enabled: Bool
    /// Whether the first read is in (or was waited for as long as allowed).
    package var ready: Bool
    /// Desktop entry files found in the last read (readable or not).
    package var entries: Int
    /// Schemes some entry is chosen for.
    package var schemesHandled: Int
    /// The configuration and `applications` folders read, in GLib's order.
    package var folders: [String]
    /// Folders the watch covers (those, and the subfolders read); 0 without a watch.
    package var foldersWatched: Int
    /// When the last read was applied, ISO 8601 in UTC; nil before the first.
    package var lastRead: String?
    /// Reads applied since the start.
    package var generation: Int
    /// First what could not be read now, then the reader's notes (files skipped, and why).
    package var problems: [String]
    /// Problems beyond those listed.
    package var moreProblems: Int
}

extension DesktopService {
    package var statusSummary: DesktopEntriesStatus {
        let layout = handlers.layout
        let all = unreadable.map(\.description) + layout.notes.map(TerminalText.escapingControls)
        return DesktopEntriesStatus(
            enabled: settings.enabled, ready: isReady, entries: layout.folders.reduce(0) { $0 + $1.entries.count },
            schemesHandled: choices.chosen.count, folders: settings.enabled ? folders : [],
            foldersWatched: settings.enabled && settings.watch && !isStopped ? foldersWatched.count : 0,
            lastRead: lastReadAt.map(ClaimTime.iso8601), generation: generation,
            problems: Array(all.prefix(DesktopEntriesStatus.maximumProblems)), moreProblems: max(0, all.count - DesktopEntriesStatus.maximumProblems))
    }
}
