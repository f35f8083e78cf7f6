import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// Watches the apps folders and the bundle folders in them with inotify, and calls
/// `onChange` (on `queue`) when anything is created, removed, renamed or rewritten, so the
/// daemon rescans. Bundle folders are watched too, so an edited Info.plist is noticed.
/// The desktop entries' folders are watched by one made with `subfolders: false` (the
/// reader names every folder it read, and `~/.config`'s subfolders are other programs')
/// and a `relevant` test of names, so a program writing its own files there is no change.
///
/// An apps folder may be missing (not created yet, or deleted): then its nearest existing
/// ancestor is watched for the next path component to appear, and the watch moves down as
/// it does. A watched folder that is deleted or renamed away falls back the same way, so a
/// folder that appears later, or is recreated, is watched and rescanned.
///
/// All the watch bookkeeping runs on `queue`, never on the caller's thread (the daemon calls
/// `watch` from its event loop). It lives in a lock box all the same, so the compiler can
/// check the type is `Sendable`; only `queue` takes the lock, so it is never contended
/// (and the daemon's open path never touches it).
final class FolderWatcher: Sendable {
    private let fd: Int32
    private let queue: DispatchQueue
    /// Dispatch sources may be cancelled from any thread, but the Linux Dispatch module does
    /// not mark them `Sendable`: the one property the compiler takes on trust.
    nonisolated(unsafe) private let source: DispatchSourceRead
    private let onChange: @Sendable () -> Void
    /// Whether the folders directly inside each watched folder are watched too.
    private let subfolders: Bool
    /// Whether an event naming a file (not a folder) in a watched folder is a change; nil: all are.
    private let relevant: (@Sendable (String) -> Bool)?
    private let state = NIOLockedValueBox(State())

    /// What a watch descriptor is for. An apps folder or a bundle folder: every event
    /// matters. An ancestor of a missing apps folder: only events naming `next` do.
    private enum Role {
        case folder
        case ancestor(next: Set<String>)
    }

    private struct State {
        /// Where events are read into.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        /// The apps folders asked for; `nil` until the first `watch`.
        var roots: [String]?
        var roles: [Int32: Role] = [:]
        /// The watch descriptor of each apps folder, or -1 while it is missing.
        var rootWatches: [String: Int32] = [:]
    }

    private static let folderMask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    private static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    init?(queue: DispatchQueue, subfolders: Bool = true, relevant: (@Sendable (String) -> Bool)? = nil, onChange: @escaping @Sendable () -> Void) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        self.queue = queue
        self.onChange = onChange
        self.subfolders = subfolders
        self.relevant = relevant
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let fd = self.fd
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    /// Watches `folders` (and, with `subfolders`, every folder directly inside them), now or
    /// once they exist. Calling it again (after each rescan) picks up new bundle folders; it
    /// is idempotent. A folder new to the list is not reported as a change: the caller has
    /// just read it.
    func watch(_ folders: [String]) {
        queue.async { [self] in
            let changed = state.withLockedValue { state in
                let first = state.roots == nil
                state.roots = folders.map(Self.withoutTrailingSlash)
                return rearm(&state) && !first
            }
            if changed { onChange() }
        }
    }

    func cancel() { source.cancel() }

    /// Drains every pending event, re-arms when the folders' shape changed, and reports a
    /// change when any event concerned an apps folder or a bundle in it.
    private func readEvents() {
        let changed = state.withLockedValue { state in
            var changed = false
            var reshaped = false
            let roles = state.roles
            state.buffer.withUnsafeMutableBytes { buffer in
                while true {
                    let count = read(fd, buffer.baseAddress, buffer.count)
                    guard count > 0 else { break }
                    var offset = 0
                    while offset + 16 <= count {
                        let wd = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                        let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + 16)..<min(offset + 16 + length, count)])
                        let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                        offset += 16 + length
                        let structural = UInt32(IN_ISDIR | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW)
                        switch roles[wd] {
                        case .folder:
                            if mask & structural != 0 { reshaped = true }
                            // The folder itself, a folder in it, or a file whose name matters.
                            if name.isEmpty || mask & structural != 0 || relevant?(name) ?? true { changed = true }
                        case .ancestor(let next):
                            if next.contains(name) || mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { reshaped = true }
                        case nil:
                            // The queue overflowed (wd -1), or a descriptor already replaced.
                            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                                changed = true
                                reshaped = true
                            }
                        }
                    }
                }
            }
            if reshaped && rearm(&state) { changed = true }
            return changed
        }
        if changed { onChange() }
    }

    /// Puts the watches where the apps folders are now. Returns whether an apps folder
    /// appeared, disappeared or was replaced since the last time.
    private func rearm(_ state: inout State) -> Bool {
        guard let roots = state.roots else { return false }
        var before = state.rootWatches
        var moved = false
        // A folder may appear between looking for it and watching its parent: look again.
        // So may a folder between a missing one and the parent watched for it (`mkdir -p`):
        // its creation came before the watch, so look again until the parent watched is
        // still the nearest that exists once watched.
        for _ in 0..<8 {
            let (roles, watches, ancestors) = arm(roots)
            let stale = Set(state.roles.keys).subtracting(roles.keys)
            for wd in stale { inotify_rm_watch(fd, wd) }
            state.roles = roles
            // A root new to this call has nothing to compare with on the first pass.
            if watches.contains(where: { root, wd in before[root].map { $0 != wd } ?? false }) { moved = true }
            state.rootWatches = watches
            before = watches
            let missing = roots.filter { watches[$0] == -1 }
            let deeper = ancestors.contains { root, parent in Self.nearestExisting(root).parent != parent }
            guard missing.contains(where: Self.isDirectory) || deeper else { break }
        }
        return moved
    }

    /// One pass: the roles of every watch wanted for `roots`, each root's descriptor, and for
    /// each missing root the parent watched for it.
    private func arm(_ roots: [String]) -> ([Int32: Role], [String: Int32], [String: String]) {
        var wanted: [String: (mask: UInt32, next: Set<String>, folder: Bool)] = [:]
        var watchedRoots: Set<String> = []
        var ancestors: [String: String] = [:]
        for root in roots {
            if Self.isDirectory(root) {
                watchedRoots.insert(root)
                wanted[root, default: (0, [], false)].mask |= Self.folderMask
                wanted[root]!.folder = true
                guard subfolders else { continue }
                for entry in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                    let path = root + "/" + entry
                    guard Self.isDirectory(path) else { continue }
                    wanted[path, default: (0, [], false)].mask |= Self.folderMask
                    wanted[path]!.folder = true
                }
            } else {
                let (parent, child) = Self.nearestExisting(root)
                ancestors[root] = parent
                wanted[parent, default: (0, [], false)].mask |= Self.ancestorMask
                wanted[parent]!.next.insert(Self.lastComponent(of: child))
            }
        }
        var roles: [Int32: Role] = [:]
        var watches: [String: Int32] = [:]
        for root in roots { watches[root] = -1 }
        for (path, want) in wanted {
            let wd = inotify_add_watch(fd, path, want.mask)
            guard wd >= 0 else { continue }
            if want.folder {
                roles[wd] = .folder
            } else if case .ancestor(let next)? = roles[wd] {
                roles[wd] = .ancestor(next: next.union(want.next))
            } else if roles[wd] == nil {
                roles[wd] = .ancestor(next: want.next)
            }
            if watchedRoots.contains(path) { watches[path] = wd }
        }
        return (roles, watches, ancestors)
    }

    /// The nearest folder above `root` that exists, and the path below it on the way to `root`.
    private static func nearestExisting(_ root: String) -> (parent: String, child: String) {
        var child = root
        var parent = parent(of: root)
        while !isDirectory(parent) && parent != child {
            child = parent
            parent = Self.parent(of: parent)
        }
        return (parent, child)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    private static func withoutTrailingSlash(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func lastComponent(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }
}
