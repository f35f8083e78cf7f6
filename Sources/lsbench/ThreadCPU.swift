import Foundation

/// CPU time by thread, from `/proc/PID/task/TID/schedstat`: the nanoseconds each thread ran
/// and waited, runnable, for a CPU, summed over threads of the same name. The cold rows read
/// it for the daemon before and after each cold open, and for the app after it, to say where
/// an open's time went: on a VM the work of the caller, the daemon and the app runs mostly
/// one piece after another, so these add up to about the open itself.
struct ThreadCPU {
    struct Time {
        var run: UInt64 = 0
        var wait: UInt64 = 0
    }

    /// By thread id: its name and its times. Differences are taken thread by thread, so a
    /// thread that ended between two readings takes nothing away from another of its name.
    var threads: [String: (name: String, time: Time)] = [:]

    /// The threads' times summed by name.
    var byName: [String: Time] {
        threads.values.reduce(into: [:]) { sums, thread in
            sums[thread.name, default: Time()].run += thread.time.run
            sums[thread.name, default: Time()].wait += thread.time.wait
        }
    }

    /// Every thread of `pid` now (empty when the process is gone).
    static func read(_ pid: pid_t) -> ThreadCPU {
        var cpu = ThreadCPU()
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return cpu }
        for task in tasks {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                  let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8) else { continue }
            let fields = stat.split(separator: " ").compactMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard fields.count >= 2 else { continue }
            cpu.threads[task] = (comm.trimmingCharacters(in: .whitespacesAndNewlines), Time(run: fields[0], wait: fields[1]))
        }
        return cpu
    }

    /// What each thread used between `earlier` and this reading (all of it, for a thread
    /// started since).
    func since(_ earlier: ThreadCPU) -> ThreadCPU {
        var delta = ThreadCPU()
        for (id, now) in threads {
            let before = earlier.threads[id]?.time ?? Time()
            delta.threads[id] = (now.name, Time(run: now.time.run - min(before.run, now.time.run), wait: now.time.wait - min(before.wait, now.time.wait)))
        }
        return delta
    }

    /// "NAME RUN µs (waiting WAIT µs)" for each name, by median over `samples`, largest first;
    /// names that ran in fewer than half the samples are left out.
    static func medians(_ samples: [ThreadCPU], prefix: String) -> [String] {
        let names = Set(samples.flatMap { $0.byName.keys })
        var lines: [(UInt64, String)] = []
        for name in names {
            let times = samples.map { $0.byName[name] ?? Time() }
            let runs = times.map(\.run).sorted(), waits = times.map(\.wait).sorted()
            guard runs.filter({ $0 > 0 }).count * 2 >= samples.count else { continue }
            let run = runs[runs.count / 2], wait = waits[waits.count / 2]
            lines.append((run, "\(prefix)\(name) \(run / 1000) µs (waiting \(wait / 1000) µs)"))
        }
        return lines.sorted { $0.0 > $1.0 }.map(\.1)
    }
}
