#if canImport(Glibc)
import Glibc
#endif

/// Who a process descends from, read from `/proc/PID/stat`. A process an app starts (a
/// shell running `lsctl default …`, say) must speak as that app, not as the user, so a
/// socket peer is matched against the running apps' pids up its chain of parents.
///
/// The daemon is a child subreaper, so a process an app started and then let go (a double
/// fork, a shell that exited) is reparented to the daemon, not to init: a chain that reaches
/// the daemon without passing an app still descends from some app, which one is no longer
/// known.
///
/// The files are in procfs (kernel memory, no disk), each read is one small `read(2)`, and
/// the walk stops at the first app, at the daemon, at pid 1 or after `maximumDepth` steps.
enum ProcessAncestry {
    static let maximumDepth = 64

    /// How often a walk starts again after an ancestor ended under it.
    static let maximumRestarts = 4

    enum Origin: Equatable {
        /// The process is the app, or descends from it.
        case app(String)
        /// It descends from the daemon through no running app: an app's orphan.
        case orphanOfApp
        /// Anything else: the user's own processes.
        case user
        /// Its chain could not be read: the daemon is out of descriptors (or memory). Neither
        /// the user nor an app may be assumed, so such a peer is refused.
        case unknown
        /// The process itself has ended: its connection outlived it, held by a process that
        /// cannot be told from the credentials (a session bus connection made by an app's
        /// child and handed on, or a socket whose connecting process exited before it was
        /// accepted). Taking it for the user would give an app's orphan the user's power, so
        /// such a peer is refused.
        case gone
    }

    /// Why a `/proc/PID/stat` was not read.
    enum Unreadable: Error {
        /// No such process (it exited), or not ours to read: the chain ends here.
        case gone
        /// EMFILE, ENFILE or ENOMEM: the file exists, the daemon could not open it now.
        case outOfResources
    }

    /// Where `pid` comes from: its own pid or its nearest ancestor that `app` names, else
    /// the daemon (`daemon`) if the chain reaches it. A `pid` that names no process is
    /// `.gone`. An ancestor that ended during the walk had its children reparented (to the
    /// daemon, a subreaper, or init), so the walk starts again from `pid`, which has its new
    /// parent by then; an ended ancestor is never read as "the user".
    static func origin(of pid: Int32, daemon: Int32, app: (Int32) -> String?) -> Origin {
        for _ in 0..<maximumRestarts {
            if let origin = walk(from: pid, daemon: daemon, app: app) { return origin }
        }
        return .gone
    }

    /// One walk up from `pid`; nil when an ancestor ended under it.
    private static func walk(from pid: Int32, daemon: Int32, app: (Int32) -> String?) -> Origin? {
        var current = pid
        for _ in 0..<maximumDepth {
            if let found = app(current) { return .app(found) }
            let parent: Int32
            do {
                parent = try readStat(of: current).parent
            } catch .outOfResources {
                return .unknown
            } catch {
                return current == pid ? .gone : nil
            }
            guard parent > 1, parent != current else { return .user }
            if parent == daemon { return .orphanOfApp }
            current = parent
        }
        return .user
    }

    /// The state letter and the parent pid from `/proc/PID/stat`.
    static func statFields(of pid: Int32) -> (state: UInt8, parent: Int32)? {
        try? readStat(of: pid)
    }

    /// `statFields`, saying why it failed: a process that is gone ends a chain, while a
    /// daemon out of descriptors knows nothing (a user's process is not assumed). The parent
    /// is field 4, after the command name in parentheses (which may itself hold spaces and
    /// parentheses, so the last `)` is searched).
    static func readStat(of pid: Int32) throws(Unreadable) -> (state: UInt8, parent: Int32) {
        // Read on every socket peer's connection, up its chain of parents: the path is
        // formatted and the file read into the stack, and the line parsed in place (a
        // formatted `String`, a zeroed array and a `split` cost 8,000 instructions a file).
        try withUnsafeTemporaryAllocation(byteCount: 512, alignment: 1) { (buffer: UnsafeMutableRawBufferPointer) throws(Unreadable) -> (state: UInt8, parent: Int32) in
            guard statPath(of: pid, into: buffer) else { throw .gone }
            let fd = open(buffer.baseAddress!.assumingMemoryBound(to: CChar.self), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                throw code == EMFILE || code == ENFILE || code == ENOMEM ? .outOfResources : .gone
            }
            defer { close(fd) }
            let count = read(fd, buffer.baseAddress, buffer.count)
            guard count > 0, let fields = parseStat(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { throw .gone }
            return fields
        }
    }

    /// `/proc/PID/stat` as a C string in `buffer`; false for a negative pid or a buffer too small.
    static func statPath(of pid: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var digits = 1
        var rest = pid / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        guard pid >= 0, buffer.count >= 6 + digits + 5 + 1 else { return false }
        var n = 0
        for byte in "/proc/".utf8 {
            buffer[n] = byte
            n += 1
        }
        rest = pid
        for k in stride(from: n + digits - 1, through: n, by: -1) {
            buffer[k] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        n += digits
        for byte in "/stat".utf8 {
            buffer[n] = byte
            n += 1
        }
        buffer[n] = 0
        return true
    }

    /// The state letter and the parent pid of a `/proc/PID/stat` line: the parent is field
    /// 4, after the command name in parentheses (which may itself hold spaces and
    /// parentheses, so the last `)` is searched). Nil when the line is not of that shape.
    static func parseStat(_ bytes: UnsafeRawBufferPointer) -> (state: UInt8, parent: Int32)? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // ") S PPID ..."
        var i = close + 1
        guard i < bytes.count, bytes[i] == UInt8(ascii: " ") else { return nil }
        i += 1
        guard i < bytes.count, bytes[i] != UInt8(ascii: " ") else { return nil }
        let state = bytes[i]
        i += 1
        guard i < bytes.count, bytes[i] == UInt8(ascii: " ") else { return nil }
        i += 1
        var value: Int32 = 0
        var digits = 0
        while i < bytes.count, bytes[i] != UInt8(ascii: " "), bytes[i] != UInt8(ascii: "\n") {
            guard bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") else { return nil }
            value = value &* 10 &+ Int32(bytes[i] - UInt8(ascii: "0"))
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        return (state, value)
    }

    /// The daemon's own children (every thread's), from `/proc/self/task/*/children`.
    static func ownChildren() -> [Int32] {
        guard let tasks = opendir("/proc/self/task") else { return [] }
        defer { closedir(tasks) }
        var children: [Int32] = []
        // One read buffer for every thread's list (one per thread was 4 KiB zeroed each,
        // the reaper's largest cost, once a second).
        var chunk = [UInt8](repeating: 0, count: 4096)
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let tid = Int32(name) else { continue }
            let fd = open("/proc/self/task/\(tid)/children", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var text: [UInt8] = []
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                text += chunk[0..<n]
            }
            close(fd)
            children += text.split(separator: UInt8(ascii: " ")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
        }
        return children
    }
}
