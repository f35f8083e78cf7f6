import CSystemd
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log backend writing structured entries to journald with `sd_journal_sendv`.
///
/// Metadata keys become journal fields in upper case (`bundle_id` → `BUNDLE_ID`), so
/// `journalctl BUNDLE_ID=com.acme.todolist` finds every entry about an app. `MESSAGE`,
/// `PRIORITY`, `SYSLOG_IDENTIFIER` and the `CODE_*` fields are always set.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String
    let identifier: String

    public init(label: String, identifier: String) {
        self.label = label
        self.identifier = identifier
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "LOGGER=\(label)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
        ]
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for (key, value) in merged {
            guard let name = Self.fieldName(key) else { continue }
            fields.append("\(name)=\(value)")
        }
        Self.send(fields)
    }

    /// Journal field names are `[A-Z0-9_]`, not starting with `_` or a digit.
    static func fieldName(_ key: String) -> String? {
        var name = String(key.uppercased().unicodeScalars.map { scalar -> Character in
            (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9") ? Character(scalar) : "_"
        })
        while name.hasPrefix("_") { name.removeFirst() }
        guard let first = name.first, !first.isNumber, name.count <= 64 else { return nil }
        return name
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    static func send(_ fields: [String]) {
        var storage = fields.map { Array($0.utf8) }
        var vectors: [iovec] = []
        vectors.reserveCapacity(storage.count)
        for index in storage.indices {
            storage[index].withUnsafeMutableBytes { raw in
                vectors.append(iovec(iov_base: raw.baseAddress, iov_len: raw.count))
            }
        }
        // The iovecs point into `storage`, which stays alive (and unmoved) until after the call.
        withExtendedLifetime(storage) {
            _ = sd_journal_sendv(vectors, Int32(vectors.count))
        }
    }

    /// Whether stderr is connected to the journal (`JOURNAL_STREAM` names its device and
    /// inode), the documented way for a service to know its output goes to journald.
    public static var stderrIsJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }
}
