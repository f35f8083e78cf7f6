#if canImport(Glibc)
import Glibc
#endif
import GRDB

/// A state database that could not be opened, read or written, named: the file, what the
/// daemon was doing, and SQLite's reason (with the system's, when SQLite had one), so the
/// caller who gets it (`lsctl register`, a kept pasteboard's copy) and the log can say
/// which file to look at. GRDB's own errors name neither the file nor the folder.
public struct StorageError: Error, CustomStringConvertible {
    /// The database file, e.g. `~/.local/state/launchservices/registry.sqlite`.
    public var file: String
    /// What could not be done: `open`, `read`, `write`, `check`, `migrate`.
    public var action: String
    public var reason: String

    public init(file: String, action: String, reason: String) {
        self.file = file
        self.action = action
        self.reason = reason
    }

    /// `error` as SQLite gave it; `systemErrno` is `sqlite3_system_errno` (0: none).
    init(file: String, action: String, _ error: Error, systemErrno: Int32 = 0) {
        self.init(file: file, action: action, reason: Self.reason(error, systemErrno: systemErrno))
    }

    public var description: String { "cannot \(action) \(file): \(reason)" }

    static func reason(_ error: Error, systemErrno: Int32) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        return reason(code: error.extendedResultCode.rawValue, message: error.message, systemErrno: systemErrno)
    }

    /// SQLite's message and extended code, what failed when SQLite says which I/O call it
    /// was, the system's reason when there is one, and where to look.
    static func reason(code: Int32, message: String?, systemErrno: Int32) -> String {
        var parts = ["SQLite error \(code)"]
        if let operation = ioOperations[code] { parts.append("\(operation) failed") }
        if systemErrno != 0 { parts.append(String(cString: strerror(systemErrno))) }
        let hint: String
        switch code & 0xFF {
        case 10, 13, 8: hint = "; check the file (ls -l, lsattr: not unwritable or immutable) and that its disk is neither full nor read-only"   // IOERR, FULL, READONLY
        case 5, 6: hint = "; another connection has the file open (another process, such as an sqlite3 shell: close it)"   // BUSY, LOCKED
        default: hint = ""
        }
        return "\(message ?? "SQLite failed") (\(parts.joined(separator: ": ")))\(hint)"
    }

    /// SQLite's extended I/O error codes: which call failed.
    private static let ioOperations: [Int32: String] = [
        266: "a read", 522: "a read (short)", 778: "a write", 1034: "an fsync", 1290: "a folder fsync", 1546: "a truncate",
        1802: "an fstat", 2058: "an unlock", 2314: "a read lock", 2570: "a delete", 3338: "an access check", 3850: "a lock",
        4106: "a close", 4618: "a shared-memory open", 4874: "a shared-memory resize", 5386: "a memory map", 6410: "a seek",
    ]
}
