#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Keeps the daemon's list of kept damaged databases true while it runs: inotify on the state
/// folder itself (not its subfolders), and the folder listed again when an entry whose name
/// holds `.damaged-` comes or goes, so `lsctl status` stops naming a kept file the user has
/// removed, without a restart. The daemon's own files there change rarely (its logs are in a
/// subfolder), and the listing runs on `queue`, never on the event loop.
final class KeptDatabaseWatch: Sendable {
    private let fd: Int32
    /// Dispatch sources may be cancelled from any thread, but the Linux Dispatch module does
    /// not mark them `Sendable`: the one property the compiler takes on trust.
    nonisolated(unsafe) private let source: DispatchSourceRead

    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Watches `folder`; calls `onChange` on `queue` with the folder's kept databases, once
    /// as soon as the watch is armed (so nothing that changed before is missed) and after
    /// every change to them. Throws, saying why, when inotify cannot watch the folder (e.g.
    /// the user's inotify instances are used up): the list taken at start then stands.
    init(folder: String, queue: DispatchQueue, onChange: @escaping @Sendable ([KeptDatabase]) -> Void) throws {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw DaemonError("inotify_init1: \(String(cString: strerror(errno)))") }
        guard inotify_add_watch(fd, folder, Self.mask) >= 0 else {
            let failure = errno
            close(fd)
            throw DaemonError("inotify_add_watch: \(String(cString: strerror(failure)))")
        }
        self.fd = fd
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            if Self.drain(fd) { onChange(KeptDatabases.list(in: folder)) }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
        queue.async { onChange(KeptDatabases.list(in: folder)) }
    }

    func cancel() { source.cancel() }

    deinit { source.cancel() }

    /// Reads every pending event; whether one concerns a kept database (or the folder itself
    /// went, or events were lost).
    private static func drain(_ fd: Int32) -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        buffer.withUnsafeMutableBytes { buffer in
            while true {
                let count = read(fd, buffer.baseAddress, buffer.count)
                guard count > 0 else { break }
                var offset = 0
                while offset + 16 <= count {
                    let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + 16) ..< min(offset + 16 + length, count)])
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    offset += 16 + length
                    if name.contains(".damaged-") || mask & UInt32(IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { relevant = true }
                }
            }
        }
        return relevant
    }
}
