import ArgumentParser
import CLaunchServicesShim
import Foundation
import LaunchServicesTesting

/// `lsopen URL` to a desktop-entry handler: the same C handler, the same desktop entry and
/// `mimeapps.list` in the same private XDG folders as the `gio open` and `xdg-open` peers
/// (`DesktopPeers`), read by a daemon of its own started with that environment (no native
/// app; its first read done before the first sample). Each sample is a whole `lsopen URL`
/// process with a new URL, timed on CLOCK_MONOTONIC from just before the spawn:
///
/// - *until lsopen exits*: reaped, exit status 0, its line checked to carry the outcome the
///   daemon reported (`handed …` = forwarded, `started …` = running). lsopen returns only when
///   the daemon knows the outcome: for a handler that exits 0 at once (forwarding, as a
///   browser's second instance does), when the daemon has seen that exit; for a handler that
///   stays alive, when the daemon's grace (`desktopEntries.graceSeconds`, 0.5 s by default)
///   has passed, which is what such an open costs the one who runs `lsopen`.
/// - *until the handler has it*: the handler's own clock reading, the peers' end point.
///
/// The handler that stays is ended by its PID (SIGTERM) after each sample. Every process the
/// daemon's launches leave to this process (its waiters, being the daemon's siblings; the
/// handler and the stderr forwarder, reparented here while this is a child subreaper) is
/// reaped by PID; none is left when the rows end.
struct DesktopOpenFigures {
    var forwarded: [UInt64] = []
    var forwardedDelivered: [UInt64] = []
    var running: [UInt64] = []
    var runningDelivered: [UInt64] = []
}

/// A desktop peer (`gio open`, `xdg-open`): its command, how many samples, and what it gave.
struct DesktopTool {
    let label: String
    let command: [String]
    let count: Int
    var samples: [UInt64] = []
    /// Why its samples were dropped, if it failed.
    var failure: String?
}

/// What `desktopSamples` took: the peers' samples, ours (nil when lsopen to a desktop entry
/// could not run), and notes on what could not run.
struct DesktopSamples {
    var tools: [DesktopTool]
    var ours: DesktopOpenFigures?
    var notes: [String] = []
}

extension LSBench {
    /// Samples per block of `desktopSamples`.
    static let desktopBlock = 10

    /// The peers' opens and `lsopen` to the same handler as a desktop entry (`forwarded`),
    /// taken in alternating blocks of `desktopBlock` rounds (the peers' block first, then
    /// ours, then ours first, …; `xdg-open`, with fewer samples, at even intervals in its
    /// blocks), after one untimed, checked open of each. Not one by one: an `lsopen` right
    /// after each `gio open` was about 1 ms slower than in a loop of its own on this VM (most
    /// likely the caches, which the much larger gio process fills with its own), while `gio
    /// open` was not slowed by the `lsopen` before it; blocks keep each side as warm as its
    /// own loop and still share the load. Then the opens of the handler that stays
    /// (`running`), half a second each. A peer or our side that fails is dropped with a
    /// note; the rest go on.
    func desktopSamples(_ desktop: DesktopPeers, tools: [DesktopTool], count: Int, runningCount: Int) throws -> DesktopSamples {
        guard ls_set_subreaper(1) == 0 else { throw DBusPeers.Unavailable(reason: "cannot become a child subreaper to reap the handler") }
        defer { _ = ls_set_subreaper(0) }
        var taken = DesktopSamples(tools: tools)
        var ours: DesktopOpens?
        do {
            ours = try DesktopOpens(desktop: desktop, binDir: binDir)
        } catch let unavailable as DBusPeers.Unavailable {
            taken.notes.append("lsopen to a desktop entry: skipped, \(unavailable.reason)")
        }
        defer { ours?.stop() }
        var figures = DesktopOpenFigures()
        func sampleOurs(_ label: String, record: Bool) {
            guard var opens = ours else { return }
            do {
                let sample = try opens.open(DesktopPeers.scheme, label: label, expecting: .forwarded)
                if record {
                    figures.forwarded.append(sample.whole)
                    figures.forwardedDelivered.append(sample.delivered)
                }
                ours = opens
            } catch {
                taken.notes.append("lsopen to a desktop entry: skipped, \(error)")
                opens.stop()
                ours = nil
            }
        }
        func samplePeer(_ index: Int, _ label: String, record: Bool) {
            guard taken.tools[index].failure == nil else { return }
            let tool = taken.tools[index]
            do {
                let sample = try desktop.open(tool.command, url: "\(DesktopPeers.scheme):x/\(tool.label)-\(label)", label: tool.label)
                if record { taken.tools[index].samples.append(sample) }
            } catch {
                taken.tools[index].failure = "\(error)"
                taken.notes.append("\(tool.label) peer: skipped, \(error)")
            }
        }
        for index in taken.tools.indices { samplePeer(index, "warmup", record: false) }
        sampleOurs("warmup", record: false)
        // In alternating blocks: each side runs back to back within a block, as a loop of
        // one command does everywhere else in the bench, and the blocks alternate so that a
        // shared machine's load falls on both alike.
        for (number, start) in stride(from: 0, to: count, by: Self.desktopBlock).enumerated() {
            let rounds = start..<min(count, start + Self.desktopBlock)
            for side in number % 2 == 0 ? [0, 1] : [1, 0] {
                for i in rounds {
                    guard side == 0 else {
                        sampleOurs("\(i)", record: true)
                        continue
                    }
                    // The peers whose turn it is: every round for as many samples as ours,
                    // else at even intervals over the rounds.
                    for index in taken.tools.indices {
                        let wanted = taken.tools[index].count
                        guard taken.tools[index].samples.count < wanted, wanted >= count || i * wanted / count != (i + 1) * wanted / count else { continue }
                        samplePeer(index, "\(i)", record: true)
                    }
                }
            }
        }
        if var opens = ours {
            do {
                _ = try opens.open(DesktopPeers.stayingScheme, label: "warmup", expecting: .running)
                for i in 0..<runningCount {
                    let sample = try opens.open(DesktopPeers.stayingScheme, label: "\(i)", expecting: .running)
                    figures.running.append(sample.whole)
                    figures.runningDelivered.append(sample.delivered)
                }
                ours = opens
            } catch {
                taken.notes.append("lsopen to a desktop entry that stays: skipped, \(error)")
                figures.running = []
                figures.runningDelivered = []
                ours = opens
            }
        }
        if ours != nil { taken.ours = figures }
        return taken
    }
}

/// One desktop row's opens through `lsopen`, and the reaping of what they leave here.
struct DesktopOpens {
    enum Outcome: String {
        case forwarded, running

        /// How lsopen's line for this outcome begins (docs/PROTOCOL.md, lsopen's output).
        var linePrefix: String { self == .forwarded ? "handed " : "started " }
    }

    let desktop: DesktopPeers
    let lsopen: String
    let folder: String
    let daemon: DaemonProcess
    /// The daemon and the children this process had before (the private bus, …): never
    /// reaped here (their `ChildProcess` does that).
    let keep: Set<pid_t>
    let environment: [String: String]
    /// Handlers that stay, by PID, ended and reaped after their sample.
    private var staying: Set<pid_t> = []

    /// Starts the daemon for these opens, with the peers' environment (at most 30 s).
    init(desktop: DesktopPeers, binDir: String) throws {
        self.desktop = desktop
        lsopen = binDir + "/lsopen"
        folder = desktop.folder + "/lsopen"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let socket = folder + "/socket"
        do {
            daemon = try DaemonProcess(executable: binDir + "/launchservicesd", socket: socket,
                                       arguments: ["--apps", folder + "/no-apps", "--state", folder + "/state", "--log-level", "warning"],
                                       environment: desktop.environment, log: folder + "/daemon.log", timeout: 30, poll: 2_000)
        } catch {
            throw DBusPeers.Unavailable(reason: "the daemon for the desktop rows did not start: \(error)")
        }
        keep = Set(Self.children()).union([daemon.pid])
        environment = desktop.environment.merging(["LAUNCHSERVICES_SOCKET": socket]) { $1 }
    }

    /// Ends what the opens left (`reapAll`), then stops the daemon.
    mutating func stop() {
        reapAll()
        daemon.stop()
    }

    /// One `lsopen SCHEME:x/lsopen-LABEL`: the nanoseconds until lsopen exited and until the
    /// handler had the URL. Throws (as a skipped row) when lsopen fails, reports another
    /// outcome, or the handler never gets the URL.
    mutating func open(_ scheme: String, label: String, expecting outcome: Outcome) throws -> (whole: UInt64, delivered: UInt64) {
        let url = "\(scheme):x/lsopen-\(label)"
        let (out, err) = (folder + "/lsopen.out", folder + "/lsopen.err")
        try? FileManager.default.removeItem(atPath: out)
        try? FileManager.default.removeItem(atPath: err)
        let start = DesktopPeers.now()
        let status = try ChildProcess(lsopen, [url], environment: environment, stdout: out, stderr: err).wait()
        let end = DesktopPeers.now()
        let said = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0, said.hasPrefix(outcome.linePrefix), said.contains(url) else {
            let error = ((try? String(contentsOfFile: err, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            throw DBusPeers.Unavailable(reason: "lsopen \(url) (expected \(outcome.rawValue)) exited with status \(status): \(said.isEmpty ? error : said)")
        }
        let (time, pid) = try handlerLine(for: url)
        if outcome == .running {
            staying.insert(pid)
            kill(pid, SIGTERM)
        }
        try reap(until: pid)
        return (end - start, time - start)
    }

    /// The handler's line for `url` (written before lsopen returned; looked for at most 10 s).
    private func handlerLine(for url: String) throws -> (time: UInt64, pid: pid_t) {
        let deadline = DesktopPeers.now() + 10_000_000_000
        while true {
            let lines = ((try? String(contentsOfFile: desktop.log, encoding: .utf8)) ?? "").split(separator: "\n")
            if let line = lines.last(where: { $0.hasSuffix(" " + url) }) {
                let fields = line.split(separator: " ")
                guard fields.count >= 3, let time = UInt64(fields[0]), let pid = pid_t(fields[1]) else { throw ValidationError("bad handler line: \(line)") }
                return (time, pid)
            }
            guard DesktopPeers.now() < deadline else { throw DBusPeers.Unavailable(reason: "the handler did not get \(url) from lsopen within 10 s") }
            usleep(200)  // a file poll, at most 10 s; nothing here can wake this process instead
        }
    }

    /// Reaps every exited child but those kept until `handler` is among them (it is ours once
    /// the waiter that started it has exited), at most 10 s.
    private mutating func reap(until handler: pid_t) throws {
        let deadline = DesktopPeers.now() + 10_000_000_000
        while !reapExited().contains(handler) {
            guard DesktopPeers.now() < deadline else {
                throw DBusPeers.Unavailable(reason: "the handler (pid \(handler)) was not reaped within 10 s")
            }
            usleep(200)  // its waiter exits within the daemon's grace; nothing signals this process
        }
        staying.remove(handler)
    }

    /// Reaps the exited children (all but those kept); returns their PIDs.
    private func reapExited() -> [pid_t] {
        Self.children().filter { pid in
            guard !keep.contains(pid) else { return false }
            var status: Int32 = 0
            return waitpid(pid, &status, WNOHANG) == pid
        }
    }

    /// The handlers still staying ended by PID, then every child but those kept reaped (the
    /// last waiters and forwarders exit on their own), at most 10 s.
    private mutating func reapAll() {
        for pid in staying { kill(pid, SIGTERM) }
        let deadline = DesktopPeers.now() + 10_000_000_000
        while Self.children().contains(where: { !keep.contains($0) }), DesktopPeers.now() < deadline {
            _ = reapExited()
            usleep(1_000)  // bounded by the deadline above
        }
        staying = []
    }

    /// This process's children, from `/proc/self/task/*/children`.
    static func children() -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }
}
