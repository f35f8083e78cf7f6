import Foundation

/// `TemporaryFolder` owns a scratch folder of a test or a benchmark: created (mode 0700,
/// unique) under the system temporary directory, and removed with all it holds by
/// `remove()` — or, with `with(prefix:_:)`, as soon as the work in it is done.
public struct TemporaryFolder: Sendable {
    public let path: String

    /// Creates `TMPDIR/PREFIX.XXXXXX`.
    public init(prefix: String = "ls") throws {
        var template = Array(((NSTemporaryDirectory() as NSString).appendingPathComponent(prefix + ".XXXXXX")).utf8CString)
        guard let made = mkdtemp(&template) else { throw ProcessError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    /// Whether the folder is still there.
    public var exists: Bool { FileManager.default.fileExists(atPath: path) }

    /// Removes the folder and everything in it; returns whether it is gone.
    @discardableResult
    public func remove() -> Bool {
        try? FileManager.default.removeItem(atPath: path)
        return !exists
    }

    /// Runs `body` with a new folder's path, and removes the folder afterwards whether
    /// `body` returns or throws; a folder that could not be removed is an error.
    public static func with<T>(prefix: String = "ls", _ body: (String) throws -> T) throws -> T {
        let folder = try TemporaryFolder(prefix: prefix)
        let result: T
        do {
            result = try body(folder.path)
        } catch {
            folder.remove()
            throw error
        }
        guard folder.remove() else { throw ProcessError("temporary folder \(folder.path) was not removed") }
        return result
    }
}

/// Writes `text` to `path`, creating the folders on the way.
public func writeFile(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}
