@testable import LaunchServicesDaemon
import LaunchServicesCore
import Testing

/// `lsctl history`'s memory: bounded, oldest dropped first, in order.
@Suite struct OpenHistoryTests {
    @Test("the history keeps the last 1000 opens, oldest first, and drops the oldest beyond that")
    func bounded() throws {
        var history = OpenHistory()
        let schemes = try (0..<1003).map { try URLScheme(validating: "s\($0)") }
        for scheme in schemes {
            history.record(source: "user", scheme: scheme, OpenOutcome(app: "a", method: .open))
        }
        let entries = history.entries
        #expect(entries.count == OpenHistory.capacity)
        #expect(entries.first?.scheme == "s3")
        #expect(entries.last?.scheme == "s1002")
        #expect(entries.map(\.scheme) == schemes.suffix(1000).map(\.normalized))
    }
}
