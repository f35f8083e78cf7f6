import Foundation

/// Reads small files whole, with a size bound, into one buffer reused from file to file:
/// thousands of desktop entries are read at a start, so no `Data`, no `FileManager`, no
/// allocation per file beyond what the parser keeps.
///
/// A file is opened non-blocking (a FIFO named `x.desktop` must not hang the read) and must be
/// a regular file, as GLib requires.
struct BoundedFileReader: ~Copyable {
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not there (`ENOENT`, `ENOTDIR`): the file simply is not.
        case absent
        case notRegular
        case tooLarge(limit: Int)
        case system(Int32)

        var description: String {
            switch self {
            case .absent: return "not there"
            case .notRegular: return "not a regular file"
            case .tooLarge(let limit): return "larger than \(limit) bytes"
            case .system(let code): return ReadFailure.text(code)
            }
        }
    }

    private var buffer: UnsafeMutableBufferPointer<UInt8>

    init(capacity: Int = 64 * 1024) {
        buffer = .allocate(capacity: max(capacity, 4096))
    }

    deinit { buffer.deallocate() }

    /// Makes the buffer hold at least `capacity` bytes, keeping the first `keeping`.
    private mutating func reserve(_ capacity: Int, keeping: Int) {
        guard buffer.count < capacity else { return }
        let grown = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        _ = grown.initialize(fromContentsOf: buffer[..<keeping])
        buffer.deallocate()
        buffer = grown
    }

    /// Reads `name` (relative to the folder `directory`, or a path when `directory` is
    /// `AT_FDCWD`) and hands its bytes to `body`, valid only during the call. `type` is what
    /// the folder listing said (`DT_REG` spares the `fstat`; `DT_FIFO` and the like are
    /// refused unopened).
    mutating func read<T>(_ name: String, in directory: Int32 = AT_FDCWD, type: UInt8 = UInt8(DT_UNKNOWN), limit: Int,
                          _ body: (UnsafeBufferPointer<UInt8>) -> T) -> Result<T, Failure> {
        let listed = Int32(type)
        guard listed == Int32(DT_REG) || listed == Int32(DT_LNK) || listed == Int32(DT_UNKNOWN) else { return .failure(.notRegular) }
        let fd = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            return .failure(code == ENOENT || code == ENOTDIR ? .absent : .system(code))
        }
        defer { close(fd) }
        if listed != Int32(DT_REG) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { return .failure(.system(errno)) }
            guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegular) }
            guard Int(info.st_size) <= limit else { return .failure(.tooLarge(limit: limit)) }
            reserve(Int(info.st_size) + 1, keeping: 0)
        }
        // To the end (the file may have grown since fstat), but never more than limit + 1.
        var count = 0
        while count <= limit {
            if count == buffer.count { reserve(min(limit + 1, count * 2), keeping: count) }
            let got = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                // A regular file as listed, now something else (replaced since the listing).
                if errno == EISDIR || errno == EAGAIN { return .failure(.notRegular) }
                return .failure(.system(errno))
            }
            count += got
        }
        guard count <= limit else { return .failure(.tooLarge(limit: limit)) }
        return .success(body(UnsafeBufferPointer(rebasing: buffer[..<count])))
    }
}
