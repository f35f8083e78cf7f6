import ArgumentParser
import CLaunchServicesShim
import Foundation
import LaunchServicesClient

/// Warm opens per second with several concurrent clients, each its own process (this
/// executable again, with `--throughput-child`). Each child connects, makes one untimed
/// open, says it is ready on fd 3 (a socketpair to the bench), and waits there for the
/// start byte, which the bench sends to every child only once all are ready. Then each
/// makes `count` opens, timing each, and writes to its output file its first start and
/// last end (the monotonic clock, the same in every process), its failures, and the
/// samples. Opens per second = all opens / (last end − first start).
enum Throughput {
    struct Result {
        let opens: Int
        let failures: Int
        let seconds: Double
        let samples: [UInt64]
    }

    /// `clients` children, each making `count` opens on `socket`.
    static func run(binary: String, socket: String, clients: Int, count: Int, work: String) throws -> Result {
        try run(clients: clients, count: count, work: work, label: "lsbench") {
            [binary, "--bin-dir", ".", "--throughput-child", socket, "--throughput-opens", String(count)]
        }
    }

    /// `clients` children started with `command` (its stdout to a file each), following the
    /// protocol above: "R" on fd 3 when ready, then the start byte, then on stdout a line
    /// "FIRST LAST FAILURES" and one sample a line.
    static func run(clients: Int, count: Int, work: String, label: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                    command: () -> [String]) throws -> Result {
        var children: [(pid: pid_t, fd: Int32, output: String)] = []
        defer {
            for child in children {
                close(child.fd)
                var status: Int32 = 0
                waitpid(child.pid, &status, 0)
            }
        }
        for n in 0..<clients {
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw ValidationError("socketpair failed") }
            let output = work + "/throughput-\(label)-\(clients)-\(n).txt"
            let arguments = command()
            let argv = arguments.map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                argv.forEach { free($0) }
                envp.forEach { free($0) }
            }
            let out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            var pid: pid_t = 0
            let rc = out < 0 ? errno : ls_spawn_app_output(&pid, arguments[0], argv, envp, fds[1], out, out)
            close(fds[1])
            if out >= 0 { close(out) }
            guard rc == 0 else { close(fds[0]); throw ValidationError("cannot start throughput client \(n)") }
            children.append((pid, fds[0], output))
        }
        var byte: UInt8 = 0
        for child in children where read(child.fd, &byte, 1) != 1 {
            throw ValidationError("a throughput client exited before it was ready (see \(child.output))")
        }
        byte = UInt8(ascii: "G")
        for child in children { _ = write(child.fd, &byte, 1) }
        var first = UInt64.max, last: UInt64 = 0, failures = 0
        var samples: [UInt64] = []
        samples.reserveCapacity(clients * count)
        for child in children {
            _ = read(child.fd, &byte, 1) // EOF once the child has written its results and exited
            let lines = ((try? String(contentsOfFile: child.output, encoding: .utf8)) ?? "").split(separator: "\n")
            let head = lines.first?.split(separator: " ").compactMap { UInt64($0) } ?? []
            guard head.count == 3, lines.count == count + 1 else { throw ValidationError("throughput client wrote no results: \(lines.first ?? "")") }
            first = min(first, head[0])
            last = max(last, head[1])
            failures += Int(head[2])
            samples += lines.dropFirst().compactMap { UInt64($0) }
        }
        return Result(opens: clients * count, failures: failures, seconds: Double(last - first) / 1e9, samples: samples)
    }

    /// The child's side (see above); exits.
    static func child(socket: String, count: Int) -> Never {
        var failures = 0
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        var byte = UInt8(ascii: "R")
        guard let client = try? LaunchServicesClient(socketPath: socket, program: "lsbench-client"),
              (try? client.open("xyz:throughput-warmup"))?.opened == true
        else {
            print("cannot connect or open")
            exit(1)
        }
        _ = write(3, &byte, 1)
        guard read(3, &byte, 1) == 1 else { exit(1) }
        let first = DispatchTime.now().uptimeNanoseconds
        for i in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            // Unique per open across every client (the PID), so the app's log shows each once.
            let opened = (try? client.open("xyz:throughput/\(getpid())/\(i)"))?.opened ?? false
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
            if !opened { failures += 1 }
        }
        let last = DispatchTime.now().uptimeNanoseconds
        client.close()
        let text = "\(first) \(last) \(failures)\n" + samples.map { "\($0)\n" }.joined()
        FileHandle.standardOutput.write(Data(text.utf8))
        exit(0)
    }
}

extension LSBench {
    /// Opens per second and p99 per open for each count in `throughputClients`.
    /// Every open is also counted where it lands: each URL is unique, and xyz writes a
    /// `[xyz] URL: …` line per delivery to its log (`appLog`), so each must appear once.
    func throughputRows(_ report: Report, socket: String, work: String, appLog: String) throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        var single: Row?
        for clients in throughputClients {
            let result = try checkedThroughput(clients: clients, socket: socket, work: work, appLog: appLog)
            var row = Row(name: "warm opens/s, \(clients) client\(clients == 1 ? "" : "s") × \(throughputOpens), 0 failed/lost/twice", count: result.opens,
                          value: .throughput(perSecond: Double(result.opens) / result.seconds, p99: Row.percentile99(result.samples.sorted())))
            if let single { row = row.against(single) } else { single = row }
            rows[clients] = report.add(row)
        }
        return rows
    }

    /// `clients` concurrent clients making `throughputOpens` opens each, every one answered
    /// opened and delivered exactly once (counted in the app's log), or the bench fails.
    func checkedThroughput(clients: Int, socket: String, work: String, appLog: String) throws -> Throughput.Result {
        let logStart = Throughput.fileSize(appLog)
        let result = try Throughput.run(binary: CommandLine.arguments[0], socket: socket, clients: clients, count: throughputOpens, work: work)
        guard result.failures == 0 else { throw ValidationError("\(result.failures) of \(result.opens) concurrent opens failed") }
        let delivered = Throughput.deliveries(in: appLog, from: logStart, expecting: result.opens)
        guard delivered.total == result.opens, delivered.distinct == result.opens else {
            throw ValidationError("\(result.opens) opens answered opened, but the app got \(delivered.distinct) distinct URLs in \(delivered.total) deliveries")
        }
        return result
    }
}

extension Throughput {
    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// The throughput URLs the app logged after byte `offset` of its log: all of them and the
    /// distinct ones. The daemon drains app output in batches, so this waits (at most 10 s)
    /// until `expecting` have arrived or the log has stopped growing for a second.
    static func deliveries(in path: String, from offset: Int, expecting: Int) -> (total: Int, distinct: Int) {
        var last = (total: 0, distinct: 0)
        var unchangedSince = DispatchTime.now().uptimeNanoseconds
        let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            let counted = count(in: path, from: offset)
            if counted.total >= expecting { return counted }
            if counted.total != last.total { unchangedSince = DispatchTime.now().uptimeNanoseconds }
            if DispatchTime.now().uptimeNanoseconds - unchangedSince > 1_000_000_000 { return counted }
            last = counted
            usleep(20_000)
        }
        return last
    }

    private static func count(in path: String, from offset: Int) -> (total: Int, distinct: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return (0, 0) }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let data = (try? handle.readToEnd()) ?? Data()
        let marker = "[xyz] URL: xyz:throughput/"
        var total = 0
        var seen: Set<Substring> = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix(marker) {
            total += 1
            seen.insert(line.dropFirst(marker.count))
        }
        return (total, seen.count)
    }
}
