import Logging
import NIOConcurrencyHelpers

/// Keeps the daemon's log lines in memory, so a test can assert what was logged.
public struct RecordingLogHandler: LogHandler {
    public let lines: NIOLockedValueBox<[String]>
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level

    public init(lines: NIOLockedValueBox<[String]>, logLevel: Logger.Level = .debug) {
        self.lines = lines
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        lines.withLockedValue { $0.append("\(event.level): \(event.message)") }
    }
}
