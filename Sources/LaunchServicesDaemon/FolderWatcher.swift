import Dispatch
import Foundation

/// Watches the apps folders and the bundle folders in them with inotify, and calls
/// `onChange` (on `queue`) when anything is created, removed, renamed or rewritten, so the
/// daemon rescans. Bundle folders are watched too, so an edited Info.plist is noticed.
final class FolderWatcher: @unchecked Sendable {
    private let fd: Int32
    private let source: DispatchSourceRead
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)

    init?(queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let fd = self.fd
        let buffer = self.buffer
        source.setEventHandler {
            // Drain every pending event; their details do not matter, only that something changed.
            while read(fd, buffer.baseAddress, buffer.count) > 0 {}
            onChange()
        }
        source.setCancelHandler {
            close(fd)
            buffer.deallocate()
        }
        source.resume()
    }

    /// Watches `folders` and every folder directly inside them. Watching a path twice is harmless.
    func watch(_ folders: [String]) {
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF)
        for folder in folders {
            _ = inotify_add_watch(fd, folder, mask)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                _ = inotify_add_watch(fd, folder + "/" + entry, mask)
            }
        }
    }

    func cancel() { source.cancel() }
}
