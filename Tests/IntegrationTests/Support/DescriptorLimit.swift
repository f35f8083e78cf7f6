import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// A running daemon brought to its descriptor limit (EMFILE) for a test: its RLIMIT_NOFILE
/// lowered with `prlimit` to what it holds now plus `room`, then greeted connections opened
/// until one is not welcomed (refused by name, or left waiting in the backlog), and callers
/// left waiting in the backlog, so a descriptor the daemon frees is taken again at once.
/// `release` closes them all and gives the daemon its own limit back: descriptors free up.
final class DescriptorLimit {
    /// The limit set: descriptors the daemon held before, plus the room.
    let limit: Int
    /// The daemon's own limit (soft:hard), given back by `release`.
    private let previous: String
    private let daemon: DaemonHarness
    /// The answer the first connection past the limit got instead of a welcome, if any.
    private(set) var refusal: Envelope?
    /// Whether a connection went unanswered (waiting in the backlog, not accepted).
    private(set) var unanswered = false
    private var fillers: [FrameConnection] = []
    private var waiting: [Int32] = []

    /// Fills `daemon`'s descriptors; `backlog` callers are left waiting once it is full
    /// (each is refused in turn with the daemon's reserve descriptor, which frees one for a
    /// moment every time: with none, a daemon at its limit stays there).
    init(daemon h: DaemonHarness, room: Int = 8, backlog: Int = 20) throws {
        daemon = h
        let current = try Self.prlimit(h, ["--nofile", "--output", "SOFT,HARD", "--noheadings"]).split(whereSeparator: \.isWhitespace)
        guard current.count == 2 else { throw HarnessError("prlimit said '\(current)', not SOFT HARD") }
        previous = current.joined(separator: ":")
        limit = Self.openDescriptors(h.daemonPID) + room
        // Only the soft limit: it is what EMFILE depends on, and it can be raised back up to
        // the hard limit without privileges.
        _ = try Self.prlimit(h, ["--nofile=\(limit):\(current[1])"])
        for _ in 0..<(room * 5) where refusal == nil && !unanswered {
            let connection = try FrameConnection.connect(path: h.socket)
            try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "filler")))
            do {
                let answer = try connection.receive(waitingFor: "welcome", deadline: .now + .seconds(5))
                if case .welcome = answer.message { fillers.append(connection) } else { refusal = answer; connection.close() }
            } catch {
                // No answer: the caller waits in the backlog, the daemon cannot accept it.
                unanswered = true
                fillers.append(connection)
            }
        }
        waiting = (0..<backlog).map { _ in Self.rawConnect(h.socket) }
    }

    /// Closes every connection it opened and gives the daemon its own limit back (once);
    /// the daemon's descriptors free up.
    func release() {
        fillers.forEach { $0.close() }
        fillers.removeAll()
        waiting.forEach { close($0) }
        waiting.removeAll()
        if !released, isAlive(daemon.daemonPID) {
            released = true
            do {
                _ = try Self.prlimit(daemon, ["--nofile=\(previous)"])
            } catch {
                Issue.record("the daemon's descriptor limit could not be given back: \(error)")
            }
        }
    }

    private var released = false

    /// Runs `prlimit --pid DAEMON ARGUMENTS`; its output.
    private static func prlimit(_ h: DaemonHarness, _ arguments: [String]) throws -> String {
        let run = try ChildProcess.run("prlimit", ["--pid", "\(h.daemonPID)"] + arguments,
                                       environment: ProcessInfo.processInfo.environment, scratch: h.root, timeout: 10)
        guard run.status == 0 else { throw HarnessError("prlimit \(arguments.joined(separator: " ")) failed: \(run.stderr)") }
        return run.stdout
    }

    deinit { release() }

    /// How many descriptors a process has open.
    static func openDescriptors(_ pid: Int32) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    /// A non-blocking connect that is never greeted nor read: a caller waiting in the backlog.
    static func rawConnect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return fd
    }
}
