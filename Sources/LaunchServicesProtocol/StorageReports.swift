/// What `status` says about the daemon's state databases (`StatusReport.damagedDatabases`),
/// beside the other reports (AdminReports.swift); the same rules: add fields, never rename.

/// A state database found damaged at a start and set aside unchanged, its `-wal`/`-shm`
/// beside it as `KEPT-wal`/`KEPT-shm`, and replaced by a new one (`status`, for as long as
/// the kept file is in the state folder: at this start, or an earlier one).
public struct DamagedDatabaseReport: Codable, Sendable, Equatable {
    /// Where it was (and where the new one is), e.g. `…/launchservices/registry.sqlite`.
    public var file: String
    /// Where it is now, e.g. `…/registry.sqlite.damaged-20261125T102533Z`; its log, `…-wal`,
    /// when the file was missing and only its log was there to keep.
    public var keptAs: String
    /// What SQLite found wrong (for a file kept at an earlier start: that its log says).
    public var reason: String
    /// What the new file does not have, as far as the damaged one could be read (for a file
    /// kept at an earlier start: which log says).
    public var lost: String
    /// When it was set aside, ISO-8601 UTC: with milliseconds at this start, to the second
    /// (from the kept file's name) at an earlier one.
    public var time: String

    public init(file: String, keptAs: String, reason: String, lost: String, time: String) {
        self.file = file
        self.keptAs = keptAs
        self.reason = reason
        self.lost = lost
        self.time = time
    }
}
