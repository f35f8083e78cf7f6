import LaunchServicesDaemon
import NIOConcurrencyHelpers

/// The in-process daemon's watcher of the apps folders (or of the desktop folders): no
/// inotify, no thread; the test says when the folders changed
/// (`InProcessDaemon.appsFoldersChanged()`, `desktopFoldersChanged()`), and can see which
/// folders the daemon asked to watch (`watched`).
final class TriggeredFolderWatcher: FolderWatching {
    private let onChange: @Sendable () -> Void
    private let cancelled = NIOLockedValueBox(false)
    private let folders = NIOLockedValueBox<[String]>([])

    init(onChange: @escaping @Sendable () -> Void) {
        self.onChange = onChange
    }

    func watch(_ folders: [String]) { self.folders.withLockedValue { $0 = folders } }
    func cancel() { cancelled.withLockedValue { $0 = true } }

    /// The folders of the last `watch`.
    var watched: [String] { folders.withLockedValue { $0 } }
    var isCancelled: Bool { cancelled.withLockedValue { $0 } }

    /// Calls back as inotify would, unless cancelled.
    func trigger() {
        guard !cancelled.withLockedValue({ $0 }) else { return }
        onChange()
    }
}
