#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesClient
import LaunchServicesCore

/// `lsopen --annotation-plist FILE`: an XML property list read from a file, bounded (a FIFO
/// or a device named as FILE is refused rather than read forever), then read into a value
/// by `XMLPropertyListReader`.
enum AnnotationFile {
    static func read(_ path: String) -> Result<PropertyListValue, AnnotationFileError> {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.unreadable(path, SystemErrorText.describe(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable(path, SystemErrorText.describe(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notAFile(path)) }
        let limit = XMLPropertyListReader.maximumBytes
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, limit + 1 - bytes.count)) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(path, SystemErrorText.describe(errno)))
            }
            if n == 0 { break }
            bytes += chunk[0 ..< n]
        }
        do {
            return .success(try XMLPropertyListReader.read(bytes))
        } catch {
            return .failure(.refused(path, error))
        }
    }
}

enum AnnotationFileError: Error, CustomStringConvertible {
    case unreadable(String, String)
    case notAFile(String)
    case refused(String, PropertyListReadError)

    var description: String {
        switch self {
        case .unreadable(let path, let why): "--annotation-plist \(TerminalText.quoted(path)): \(why)"
        case .notAFile(let path): "--annotation-plist \(TerminalText.quoted(path)) is not a regular file"
        case .refused(let path, let error): "--annotation-plist \(TerminalText.quoted(path)): \(error)"
        }
    }
}
