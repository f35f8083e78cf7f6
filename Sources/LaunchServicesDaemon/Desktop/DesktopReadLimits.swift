/// The bounds on reading the XDG desktop layout: anyone can put files in a data folder, and
/// the daemon reads them at every start and change, so nothing read is unbounded.
public struct DesktopReadLimits: Sendable, Equatable {
    /// A desktop entry larger than this is skipped (a large real one, every translation
    /// included, is under 100 KiB).
    public var maximumEntryBytes: Int
    /// A `mimeapps.list` or `defaults.list` larger than this is ignored.
    public var maximumListBytes: Int
    /// A `mimeinfo.cache` larger than this is ignored (a whole distribution's is under 1 MiB).
    public var maximumCacheBytes: Int
    /// A file with a longer line is refused (as malformed).
    public var maximumLineBytes: Int
    /// Desktop entries read in all data folders together; the rest are not read (and noted).
    public var maximumEntries: Int
    /// Subfolder levels below an `applications` folder that are read.
    public var maximumDepth: Int

    public init(maximumEntryBytes: Int = 256 * 1024, maximumListBytes: Int = 1024 * 1024, maximumCacheBytes: Int = 8 * 1024 * 1024,
                maximumLineBytes: Int = 64 * 1024, maximumEntries: Int = 20_000, maximumDepth: Int = 8) {
        self.maximumEntryBytes = maximumEntryBytes
        self.maximumListBytes = maximumListBytes
        self.maximumCacheBytes = maximumCacheBytes
        self.maximumLineBytes = maximumLineBytes
        self.maximumEntries = maximumEntries
        self.maximumDepth = maximumDepth
    }
}
