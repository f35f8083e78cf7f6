import Foundation
import GRDB
import LaunchServicesTesting

/// Reads a state database while its daemon runs. The daemon holds its databases with an
/// exclusive lock (no other process may open them), so a test reads a copy of the files:
/// the database and its write-ahead log, which holds what was written since the last
/// checkpoint. Read after the daemon answered the writes the test waits for.
enum DatabaseCopy {
    static func read<T>(_ file: String, _ body: (Database) throws -> T) throws -> T {
        let folder = try TemporaryFolder(prefix: "lsdbcopy")
        defer { folder.remove() }
        let copy = folder.path + "/copy.sqlite"
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: file + suffix) {
            try FileManager.default.copyItem(atPath: file + suffix, toPath: copy + suffix)
        }
        let queue = try DatabaseQueue(path: copy)
        defer { try? queue.close() }
        return try queue.read(body)
    }

    /// The bytes of every file of a database, by suffix: the file (`""`), its write-ahead log
    /// (`"-wal"`) and its shared-memory index (`"-shm"`), those that exist.
    static func bytes(_ file: String) -> [String: Data] {
        var bytes: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm"] {
            if let data = FileManager.default.contents(atPath: file + suffix) { bytes[suffix] = data }
        }
        return bytes
    }
}
