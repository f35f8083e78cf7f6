#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol

/// The recent opens, for `lsctl history`: a ring of at most `capacity` entries, oldest
/// dropped first, in memory only. An entry holds the scheme, never the URL (it may carry
/// secrets), and the rest of the outcome: who asked, which app, how it was found, how it
/// ended, each phase's time.
struct OpenHistory {
    static let capacity = 1000
    private var ring: [HistoryEntry] = []
    private var next = 0

    mutating func record(source: String, scheme: URLScheme, _ outcome: OpenOutcome) {
        var phases: [String: Double] = [:]
        for timing in outcome.timings { phases[timing.phase.rawValue] = Double(timing.nanoseconds) / 1e6 }
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let entry = HistoryEntry(
            time: ClaimTime.iso8601(Int64(clock.tv_sec) * 1000 + Int64(clock.tv_nsec) / 1_000_000),
            source: source, scheme: scheme.normalized, app: outcome.app, launchState: outcome.launchState?.rawValue,
            outcome: outcome.error?.code.rawValue ?? "opened", method: outcome.method?.rawValue,
            phasesMs: phases, totalMs: outcome.totalNanoseconds.map { Double($0) / 1e6 })
        if ring.count < Self.capacity {
            ring.append(entry)
        } else {
            ring[next] = entry
        }
        next = (next + 1) % Self.capacity
    }

    /// Oldest first.
    var entries: [HistoryEntry] {
        ring.count < Self.capacity ? ring : Array(ring[next...] + ring[..<next])
    }
}
