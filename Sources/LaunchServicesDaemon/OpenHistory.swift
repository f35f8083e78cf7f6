#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol

/// The recent opens, for `lsctl history`: a ring of at most `capacity` entries, oldest
/// dropped first, in memory only. An entry holds the scheme, never the URL (it may carry
/// secrets), and the rest of the outcome: who asked, which app, how it was found, how it
/// ended, each phase's time. Recording is on the open path, so it keeps the raw values;
/// the report is built only when someone asks.
struct OpenHistory {
    static let capacity = 1000

    private struct Record {
        let milliseconds: Int64
        let source: String
        let scheme: URLScheme
        let outcome: OpenOutcome
    }

    private var ring: [Record] = []
    private var next = 0

    mutating func record(source: String, scheme: URLScheme, _ outcome: OpenOutcome) {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        // Error texts may quote the URL: only the code is kept.
        var kept = outcome
        kept.error?.message = ""
        let record = Record(milliseconds: Int64(clock.tv_sec) * 1000 + Int64(clock.tv_nsec) / 1_000_000, source: source, scheme: scheme, outcome: kept)
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
                time: ClaimTime.iso8601(record.milliseconds), source: record.source, scheme: record.scheme.normalized,
                app: outcome.app, launchState: outcome.launchState?.rawValue, outcome: outcome.error?.code.rawValue ?? "opened",
                method: outcome.method?.rawValue, phasesMs: phases, totalMs: outcome.totalNanoseconds.map { Double($0) / 1e6 })
        }
    }
}
