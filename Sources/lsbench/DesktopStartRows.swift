import ArgumentParser
import Foundation
import LaunchServicesTesting

/// The daemon's start with a user's desktop entries (`DesktopLayoutFixture`) against its start
/// with the same private XDG folders empty. Two figures from each start:
///
/// - *first answer*: exec until the socket answers a status query, as the registry's start
///   rows measure. The desktop entries are read off the start's path (on a worker, while the
///   daemon already answers), so this is what they cost a native open or an `lsctl` call at
///   start: the read's competition for the CPU, not a wait for it.
/// - *desktop entries read*: exec until the daemon logs that its first read of them is in
///   (`desktop entries read: N entries …`, checked to count them all), from which on a URL
///   for a desktop handler is answered without waiting for the read.
///
/// One untimed start of each first (its read written to the state's desktop claims, as in
/// any start after the first), then `starts` timed ones, alternating empty and loaded so the
/// machine's load falls on both alike.
extension LSBench {
    func desktopStartRows(_ report: Report, work: String, idle: Row?) throws {
        guard let peerBinDir, FileManager.default.isExecutableFile(atPath: peerBinDir + "/lsbenchpeer_handler") else {
            report.gap()
            report.note("desktop entries start rows: skipped (no lsbenchpeer_handler in --peer-bin-dir; scripts/bench builds it)")
            return
        }
        let handler = peerBinDir + "/lsbenchpeer_handler"
        let empty = try DesktopLayoutFixture(count: 0, into: work + "/desktop-start-empty", handler: handler, updateDesktopDatabase: updateDesktopDatabase)
        let loaded = try DesktopLayoutFixture(count: desktopEntries, into: work + "/desktop-start-loaded", handler: handler, updateDesktopDatabase: updateDesktopDatabase)
        var samples: [String: (answer: [UInt64], read: [UInt64])] = [:]
        var memory: Row?
        for n in -1..<starts {
            for fixture in [empty, loaded] {
                let start = try timedDesktopStart(fixture, label: n < 0 ? "warmup" : "\(n)", keep: n == starts - 1 && fixture.count > 0)
                if let daemon = start.daemon {
                    memory = try DaemonMemory.row("daemon memory with \(fixture.count) desktop entries, read", pid: daemon.pid)
                    daemon.stop()
                }
                guard n >= 0 else { continue }
                samples[fixture.folder, default: ([], [])].answer.append(start.answer)
                samples[fixture.folder, default: ([], [])].read.append(start.read)
            }
        }
        report.gap()
        let (emptySamples, loadedSamples) = (samples[empty.folder]!, samples[loaded.folder]!)
        let emptyAnswer = report.row("daemon start → first answer, no desktop entries (baseline)", emptySamples.answer)
        report.row("daemon start → first answer, \(desktopEntries) desktop entries", loadedSamples.answer, baseline: emptyAnswer)
        let emptyRead = report.row("daemon start → desktop entries read, none there (baseline)", emptySamples.read)
        report.row("daemon start → \(desktopEntries) desktop entries read", loadedSamples.read, baseline: emptyRead)
        if let memory { report.add(idle.map(memory.against) ?? memory) }
    }

    struct DesktopStart {
        var answer: UInt64
        var read: UInt64
        /// The daemon, still running when asked to keep it.
        var daemon: DaemonProcess?
    }

    /// One start with `fixture`'s environment: the times to the first answer and to the log
    /// line of the first read (at most 30 s), checked to count every entry.
    func timedDesktopStart(_ fixture: DesktopLayoutFixture, label: String, keep: Bool) throws -> DesktopStart {
        let socket = fixture.folder + "/\(label).sock", log = fixture.folder + "/daemon-\(label).log"
        let start = DispatchTime.now().uptimeNanoseconds
        let daemon = try DaemonProcess(executable: binDir + "/launchservicesd", socket: socket,
                                       arguments: ["--apps", fixture.folder + "/no-apps", "--state", fixture.folder + "/state", "--log-level", "info"],
                                       environment: fixture.environment, log: log, timeout: 30, poll: 500)
        let answer = DispatchTime.now().uptimeNanoseconds - start
        var stopped = false
        defer { if !stopped { daemon.stop() } }
        let deadline = start + 30_000_000_000
        while true {
            let text = daemon.output
            if let range = text.range(of: "desktop entries read: ") {
                let read = DispatchTime.now().uptimeNanoseconds - start
                let line = text[range.upperBound...].prefix { $0 != "\n" }
                // Every file counted, and (with entries) at least their own schemes handled:
                // two each, less the uninstalled and hidden ones.
                let handled = line.split(separator: ",").dropFirst().first.flatMap { Int($0.split(separator: " ").first ?? "") } ?? -1
                guard line.hasPrefix("\(fixture.count) entries "), handled >= fixture.count else {
                    let notes = text.split(separator: "\n").filter { $0.contains("desktop entries: ") }.prefix(5).joined(separator: "\n")
                    throw ValidationError("the daemon read another layout than the bench wrote (\(fixture.count) entries): \(line)\n\(notes)")
                }
                if keep { stopped = true }
                return DesktopStart(answer: answer, read: read, daemon: keep ? daemon : nil)
            }
            guard DispatchTime.now().uptimeNanoseconds < deadline, daemon.isRunning else {
                throw ValidationError("the daemon did not log its first read of \(fixture.count) desktop entries within 30 s: \(daemon.output.suffix(2000))")
            }
            usleep(500)  // a log poll, as the start rows poll the socket; bounded by the deadline
        }
    }
}

extension LSBench {
    /// `--desktop-only`: the desktop-entry rows and the peers they are put beside, on a
    /// private bus as in the whole run, without the rest.
    func runDesktopOnly(work: String) throws {
        let report = Report(json: json)
        if let peerBinDir, let dbusDaemon {
            let peers = DBusPeers(peerBinDir: peerBinDir, work: work)
            let bus = try peers.startDBusDaemon(dbusDaemon)
            defer { bus.stop() }
            try desktopPeerRows(report, peers: peers, bus: bus, ours: nil)
        } else {
            report.note("lsopen to a desktop entry and its peers: skipped (run through scripts/bench, which builds the handler and passes --peer-bin-dir and --dbus-daemon)")
        }
        try desktopStartRows(report, work: work, idle: nil)
        try report.finish()
    }
}

extension LSBench {
    /// `--write-desktop-layout FOLDER`: the start rows' layout, kept, and the variables that
    /// differ from this process's environment, as `KEY=VALUE` lines for `env`.
    func writeLayout(_ folder: String) throws {
        guard let peerBinDir else { throw ValidationError("--write-desktop-layout needs --peer-bin-dir (the folder with lsbenchpeer_handler)") }
        guard !FileManager.default.fileExists(atPath: folder) else { throw ValidationError("\(folder) exists; give a new folder") }
        let fixture = try DesktopLayoutFixture(count: desktopEntries, into: folder, handler: peerBinDir + "/lsbenchpeer_handler",
                                               updateDesktopDatabase: updateDesktopDatabase)
        let own = ProcessInfo.processInfo.environment
        for (key, value) in fixture.environment.sorted(by: { $0.key < $1.key }) where own[key] != value { print("\(key)=\(value)") }
        for key in own.keys.sorted() where fixture.environment[key] == nil { print("# unset \(key)") }
    }
}
