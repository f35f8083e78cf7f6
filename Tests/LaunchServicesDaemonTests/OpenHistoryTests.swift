@testable import LaunchServicesDaemon
import LaunchServicesCore
import LaunchServicesProtocol
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

    @Test("refusals, invalid URLs, opens whose caller left and withdrawn opens are recorded, never the URL")
    func everyAnswer() throws {
        var history = OpenHistory()
        let alpha = try URLScheme(validating: "alpha")
        history.record(source: "user", unparsed: "ALPHA:bad url secret", .failure(OpenError(.invalidURL, "invalid URL: 'ALPHA:bad url secret'")))
        history.record(source: "user", unparsed: "no scheme secret", .failure(OpenError(.invalidURL, "no scheme")))
        history.record(source: "user", scheme: alpha, .failure(OpenError(.notPermitted, "refused to open 'alpha:secret'"), app: "a"))
        history.record(source: "user", scheme: alpha, .failure(OpenError(.timeout, phase: .openURL, "timed out"), app: "a", launchState: .hot), callerLeft: true)
        history.recordWithdrawn(source: "user", scheme: alpha, app: "a")
        let entries = history.entries
        #expect(entries.map(\.outcome) == ["invalidURL", "invalidURL", "notPermitted", "timeout", HistoryEntry.withdrawn])
        #expect(entries.map(\.scheme) == ["alpha", "", "alpha", "alpha", "alpha"])
        #expect(entries.map(\.callerLeft) == [nil, nil, nil, true, true])
        #expect(entries[3].launchState == "hot")
        #expect(!"\(entries)".contains("secret"))
    }
}
