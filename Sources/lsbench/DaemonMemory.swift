import ArgumentParser
import Foundation
import LaunchServicesClient

/// The daemon's memory, read from `/proc/PID/status` of the daemon this bench started:
/// VmRSS (resident now) and VmHWM (the most it has been resident). Taken idle after start,
/// after many warm opens (growth there would be a leak per open), and with the large
/// registry loaded.
enum DaemonMemory {
    /// A memory row for `pid`, as it is now.
    static func row(_ name: String, pid: pid_t, count: Int = 1) throws -> Row {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kib(_ key: String) throws -> UInt64 {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
                  let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ UInt64($0) })
            else { throw ValidationError("no \(key) in /proc/\(pid)/status") }
            return value
        }
        return Row(name: name, count: count, value: .memory(rssKiB: try kib("VmRSS"), peakKiB: try kib("VmHWM")))
    }
}

extension LSBench {
    /// `rssOpens` warm opens through `client` (each must be opened by the app), then the
    /// daemon's memory, against its memory when idle.
    func memoryAfterOpens(_ report: Report, client: LaunchServicesClient, daemon: pid_t, idle: Row) throws {
        var failures = 0
        for i in 0..<rssOpens {
            let outcome = try client.open("xyz:rss/\(i)")
            if !outcome.opened { failures += 1 }
        }
        guard failures == 0 else { throw ValidationError("\(failures) of \(rssOpens) warm opens were not opened") }
        report.add(try DaemonMemory.row("daemon memory after \(rssOpens) warm opens (0 failed)", pid: daemon, count: rssOpens).against(idle))
    }
}
