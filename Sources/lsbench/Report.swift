import Foundation

/// One result of the run: the single model that both outputs (the table, `--json`) render,
/// so they cannot drift. A row is a latency (median and p99 of samples), a memory reading
/// (resident and peak resident size) or a throughput (operations per second, with the p99
/// of one operation); any of them may name a baseline row and carry the ratio to it.
struct Row {
    enum Value {
        /// Median and p99 of timed samples, in nanoseconds.
        case latency(median: UInt64, p99: UInt64)
        /// VmRSS and VmHWM of a process, in KiB.
        case memory(rssKiB: UInt64, peakKiB: UInt64)
        /// Operations per second over the whole run, and the p99 of one operation in nanoseconds.
        case throughput(perSecond: Double, p99: UInt64)
    }

    let name: String
    let count: Int
    let value: Value
    /// The baseline's name and the ratio to it, when the row has one.
    var baseline: (name: String, ratio: Double)?

    /// The number ratios are taken of: the median, the resident size, the rate.
    var primary: Double {
        switch value {
        case let .latency(median, _): Double(median)
        case let .memory(rss, _): Double(rss)
        case let .throughput(rate, _): rate
        }
    }

    static func latency(_ name: String, _ samples: [UInt64]) -> Row {
        let sorted = samples.sorted()
        return Row(name: name, count: samples.count, value: .latency(median: sorted[sorted.count / 2], p99: percentile99(sorted)))
    }

    static func percentile99(_ sorted: [UInt64]) -> UInt64 {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    }

    /// This row, compared with `baseline` (ratio of the primary values).
    func against(_ baseline: Row) -> Row {
        var row = self
        row.baseline = (baseline.name, primary / baseline.primary)
        return row
    }

    /// One line of the table.
    var line: String {
        var line = "\(name.padding(toLength: 62, withPad: " ", startingAt: 0)) n=\(String(count).padding(toLength: 6, withPad: " ", startingAt: 0)) "
        switch value {
        case let .latency(median, p99): line += "median \(Self.time(median))  p99 \(Self.time(p99))"
        case let .memory(rss, peak): line += "rss    \(Self.size(rss))  peak \(Self.size(peak))"
        case let .throughput(rate, p99): line += String(format: "%9.0f/s", rate) + "  p99 \(Self.time(p99))"
        }
        if let baseline { line += "  ratio \(String(format: "%.2f", baseline.ratio))x" }
        return line
    }

    /// One object of the JSON document.
    var json: [String: Any] {
        var object: [String: Any] = ["name": name, "count": count]
        switch value {
        case let .latency(median, p99): object.merge(["kind": "latency", "median_ns": median, "p99_ns": p99]) { $1 }
        case let .memory(rss, peak): object.merge(["kind": "memory", "rss_kib": rss, "peak_kib": peak]) { $1 }
        case let .throughput(rate, p99): object.merge(["kind": "throughput", "per_second": rate.rounded(), "p99_ns": p99]) { $1 }
        }
        if let baseline { object.merge(["baseline": baseline.name, "ratio": (baseline.ratio * 1000).rounded() / 1000]) { $1 } }
        return object
    }

    static func time(_ ns: UInt64) -> String {
        ns < 1_000_000 ? String(format: "%7.1f µs", Double(ns) / 1e3) : String(format: "%7.2f ms", Double(ns) / 1e6)
    }

    static func size(_ kib: UInt64) -> String {
        kib < 10 * 1024 ? String(format: "%7d KiB", kib) : String(format: "%7.1f MiB", Double(kib) / 1024)
    }
}

/// Collects the rows and notes of one run. As a table, each row and note is printed as it
/// comes; with `--json`, nothing is printed until `finish()` prints the one document.
final class Report {
    let json: Bool
    private(set) var rows: [Row] = []
    private var notes: [String] = []

    init(json: Bool) {
        self.json = json
        if !json { print("lsbench: \(ProcessInfo.processInfo.activeProcessorCount) CPUs; medians and p99, ratio = median / baseline median\n") }
    }

    /// Records `row` (and prints it in table mode); returns it, to serve as a baseline.
    @discardableResult
    func add(_ row: Row) -> Row {
        rows.append(row)
        if !json { print(row.line) }
        return row
    }

    /// A latency row from samples, against `baseline` when given.
    @discardableResult
    func row(_ name: String, _ samples: [UInt64], baseline: Row? = nil) -> Row {
        let row = Row.latency(name, samples)
        return add(baseline.map(row.against) ?? row)
    }

    /// A line of text (a skipped part, a remark); in JSON, an entry of "notes".
    func note(_ text: String) {
        notes.append(text)
        if !json { print(text) }
    }

    /// A blank line between the table's parts (nothing in JSON).
    func gap() {
        if !json { print("") }
    }

    /// In JSON mode, prints the document: the machine, the date, the rows, the notes.
    func finish() throws {
        guard json else { return }
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let document: [String: Any] = [
            "machine": ["cores": ProcessInfo.processInfo.activeProcessorCount, "kernel": kernel],
            "date": ISO8601DateFormatter().string(from: Date()),
            "rows": rows.map(\.json),
            "notes": notes,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }
}
