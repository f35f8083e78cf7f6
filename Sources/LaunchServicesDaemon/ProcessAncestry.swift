#if canImport(Glibc)
import Glibc
#endif

/// Who a process descends from, read from `/proc/PID/stat`. A process an app starts (a
/// shell running `lsctl default …`, say) must speak as that app, not as the user, so a
/// socket peer is matched against the running apps' pids up its chain of parents.
///
/// The files are in procfs (kernel memory, no disk), each read is one small `read(2)`, and
/// the walk stops at the first app, at pid 1 or after `maximumDepth` steps.
enum ProcessAncestry {
    static let maximumDepth = 64

    /// The first of `pid`'s ancestors (not `pid` itself) for which `match` returns a value.
    static func nearest<T>(ancestorOf pid: Int32, match: (Int32) -> T?) -> T? {
        var current = pid
        for _ in 0..<maximumDepth {
            guard let parent = parent(of: current), parent > 1, parent != current else { return nil }
            if let found = match(parent) { return found }
            current = parent
        }
        return nil
    }

    /// The parent pid: field 4 of `/proc/PID/stat`, after the command name in parentheses
    /// (which may itself hold spaces and parentheses, so the last `)` is searched).
    static func parent(of pid: Int32) -> Int32? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let bytes = buffer[0..<count]
        guard let end = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // ") S PPID ..."
        var index = end + 1
        var field = 0
        var value: Int32 = 0
        var inNumber = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") {
                if inNumber { return value }
                field += 1
            } else if field == 2 {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                inNumber = true
                value = value &* 10 &+ Int32(byte - UInt8(ascii: "0"))
            }
            index += 1
        }
        return inNumber ? value : nil
    }
}
