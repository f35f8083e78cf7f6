import LaunchServicesDaemon
import NIOConcurrencyHelpers

/// The in-process daemon's watcher of the apps folders: no inotify, no thread; the test
/// says when the folders changed (`InProcessDaemon.appsFoldersChanged()`).
final class TriggeredFolderWatcher: FolderWatching {
    private let onChange: @Sendable () -> Void
    private let cancelled = NIOLockedValueBox(false)

    init(onChange: @escaping @Sendable () -> Void) {
        self.onChange = onChange
    }

    func watch(_ folders: [String]) {}
    func cancel() { cancelled.withLockedValue { $0 = true } }

    /// Calls back as inotify would, unless cancelled.
    func trigger() {
        guard !cancelled.withLockedValue({ $0 }) else { return }
        onChange()
    }
}
