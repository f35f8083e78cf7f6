#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol

/// The recent opens, for `lsctl history`: a ring of at most `capacity` entries, oldest
/// dropped first, in memory only. Every open the daemon answers is there — delivered,
/// refused before any app was chosen (an invalid URL, no handler, the callback rule, a full
/// connection), ended after its caller left (a timeout the caller did not wait for), or
/// withdrawn because its caller left before it reached the app. An entry holds the scheme,
/// never the URL (it may carry secrets), and the rest of the outcome: who asked, which app,
/// how it was found, how it ended, each phase's time. Recording is on the open path, so it
/// keeps the raw values; the report is built only when someone asks.
struct OpenHistory {
    static let capacity = 1000

    private struct Record {
        let milliseconds: Int64
        let source: String
        /// How a caller not on the socket reached the daemon (`ClientConnection.via`).
        let via: String?
        /// Normalized; empty when the URL had no valid scheme.
        let scheme: String
        let outcome: OpenOutcome
        let callerLeft: Bool
        let withdrawn: Bool
    }

    private var ring: [Record] = []
    private var next = 0

    /// An open answered (or ended, when `callerLeft`).
    mutating func record(source: String, via: String? = nil, scheme: URLScheme, _ outcome: OpenOutcome, callerLeft: Bool = false) {
        append(source: source, via: via, scheme: scheme.normalized, outcome, callerLeft: callerLeft, withdrawn: false)
    }

    /// An open refused before its URL was understood (`invalidURL`): the scheme is kept when
    /// the text has a valid one.
    mutating func record(source: String, via: String? = nil, unparsed text: String, _ outcome: OpenOutcome) {
        let scheme = text.firstIndex(of: ":").flatMap { try? URLScheme(validating: String(text[..<$0])) }
        append(source: source, via: via, scheme: scheme?.normalized ?? "", outcome, callerLeft: false, withdrawn: false)
    }

    /// An open withdrawn from an app's queue because its caller left before it was delivered.
    mutating func recordWithdrawn(source: String, via: String? = nil, scheme: URLScheme, app: String?) {
        append(source: source, via: via, scheme: scheme.normalized, OpenOutcome(app: app), callerLeft: true, withdrawn: true)
    }

    private mutating func append(source: String, via: String?, scheme: String, _ outcome: OpenOutcome, callerLeft: Bool, withdrawn: Bool) {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        // Error texts may quote the URL: only the code is kept.
        var kept = outcome
        kept.error?.message = ""
        let record = Record(milliseconds: Int64(clock.tv_sec) * 1000 + Int64(clock.tv_nsec) / 1_000_000, source: source, via: via, scheme: scheme,
                            outcome: kept, callerLeft: callerLeft, withdrawn: withdrawn)
        if ring.count < Self.capacity {
            ring.append(record)
        } else {
            ring[next] = record
        }
        next = (next + 1) % Self.capacity
    }

    /// Oldest first.
    var entries: [HistoryEntry] {
        let ordered = ring.count < Self.capacity ? ring : Array(ring[next...] + ring[..<next])
        return ordered.map { record in
            let outcome = record.outcome
            var phases: [String: Double] = [:]
            for timing in outcome.timings { phases[timing.phase.rawValue] = Double(timing.nanoseconds) / 1e6 }
            return HistoryEntry(
                time: ClaimTime.iso8601(record.milliseconds), source: record.source, scheme: record.scheme,
                app: outcome.app, launchState: outcome.launchState?.rawValue,
                outcome: record.withdrawn ? HistoryEntry.withdrawn : outcome.error?.code.rawValue ?? "opened",
                method: outcome.method?.rawValue, phasesMs: phases, totalMs: outcome.totalNanoseconds.map { Double($0) / 1e6 },
                callerLeft: record.callerLeft ? true : nil, kind: outcome.app == nil ? nil : outcome.handlerKind?.rawValue,
                desktopOutcome: outcome.desktop?.kind.rawValue, pid: outcome.desktop?.pid, via: record.via)
        }
    }
}
