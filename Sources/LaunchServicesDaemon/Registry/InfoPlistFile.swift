import Foundation
import LaunchServicesCore

/// Reads a bundle's `Info.plist` with a bound, for `BundleLoader`.
///
/// Anyone who can write into an apps folder or run `lsctl register` chooses this file, so it
/// is opened without blocking (a FIFO named Info.plist would otherwise hang the open until a
/// writer appears), must be a regular file (not a FIFO, device or folder), and at most
/// `limit + 1` bytes are read, however large it is or grows while being read. Symbolic links
/// are followed: a linked Info.plist is a normal way to build a bundle, and the checks apply
/// to what the link names.
///
/// A failure that more resources or a retry could cure (`ReadFailure`: the descriptor limit,
/// an I/O error, permissions) is `unreadable`, not a refusal: a scan keeps the bundle's
/// registration as it was.
enum InfoPlistFile {
    static func read(bundle: String, limit: Int) throws(BundleReadFailure) -> [UInt8] {
        func unreadable(_ code: Int32) -> BundleReadFailure {
            let error = BundleError(path: bundle, key: nil, problem: "has no readable Info.plist: \(ReadFailure.text(code))")
            return BundleReadFailure.classify(code, what: "Info.plist", absent: error, unreadable: error)
        }
        let fd = open(bundle + "/Info.plist", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .refused(BundleError(path: bundle, key: nil, problem: "has no readable Info.plist")) }
            // A socket (ENXIO) or a device that will not open is refused for its kind.
            var info = stat()
            if stat(bundle + "/Info.plist", &info) == 0, info.st_mode & S_IFMT != S_IFREG { throw .refused(notRegular(bundle, info.st_mode)) }
            throw unreadable(code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw unreadable(errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .refused(notRegular(bundle, info.st_mode)) }
        if Int(info.st_size) > limit { throw .refused(tooLarge(bundle, size: Int(info.st_size), limit: limit)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size) + 1)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, wanted) }
            if n < 0 {
                if errno == EINTR { continue }
                throw unreadable(errno)
            }
            if n == 0 { break }
            bytes += chunk[0 ..< n]
        }
        if bytes.count > limit { throw .refused(tooLarge(bundle, size: bytes.count, limit: limit)) }
        return bytes
    }

    static func notRegular(_ bundle: String, _ mode: mode_t) -> BundleError {
        BundleError(path: bundle, key: nil, problem: "Info.plist is \(kind(mode)), not a regular file; make it a plain file")
    }

    static func tooLarge(_ bundle: String, size: Int, limit: Int) -> BundleError {
        BundleError(path: bundle, key: nil, problem: "Info.plist \(PropertyListBoundsError.tooLarge(size: size, limit: limit))")
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFDIR: return "a folder"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "a special file"
        }
    }
}
