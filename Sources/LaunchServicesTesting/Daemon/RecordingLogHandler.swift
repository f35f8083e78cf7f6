import Logging
import NIOConcurrencyHelpers

/// Keeps the daemon's log lines in memory, so a test can assert what was logged.
struct RecordingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLockedValue { $0.append("\(event.level): \(event.message)") }
    }
}
