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

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        lines.withLockedValue { $0.append("\(level): \(message)") }
    }
}
