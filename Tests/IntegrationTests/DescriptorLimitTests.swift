import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// A datagram socket standing in for the service manager's notification socket
/// (`NOTIFY_SOCKET`): the test reads what the daemon tells systemd.
final class NotificationSocket {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw HarnessError("bind \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next message, waiting at most until `deadline`; nil if none came.
    func receive(until deadline: Date) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return String(decoding: buffer[0..<n], as: UTF8.self) }
            let wait = deadline.timeIntervalSinceNow
            guard errno == EAGAIN || errno == EINTR, wait > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(min(wait, 1) * 1000) + 1)
        }
    }

    /// Discards what has arrived so far.
    func drain() {
        while receive(until: Date()) != nil {}
    }
}

/// The daemon at its descriptor limit (EMFILE): it idles, keeps the watchdog fed, serves
/// the connections it has, tells new callers why they are refused, and accepts again once
/// descriptors free up.
@Suite("Descriptor limit")
struct DescriptorLimitTests {
    /// User + system CPU time of a process, in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // After ")": state is field 3; utime and stime are fields 14 and 15.
        return Double((Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("at the descriptor limit the daemon idles, keeps the watchdog fed and serves its connections; new callers are told LimitNOFILE; accepting resumes when descriptors free up")
    func atTheLimit() throws {
        let scratch = try TemporaryFolder(prefix: "lsfd").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let notifications = try NotificationSocket(path: scratch + "/notify")
        // A watchdog of 1 s: the daemon pings every 0.5 s.
        let h = try DaemonHarness(apps: [.test("alpha")], environment: ["NOTIFY_SOCKET": notifications.path, "WATCHDOG_USEC": "1000000"])
        defer { h.stop() }
        var ready = false
        let readyBy = Date().addingTimeInterval(20)
        while !ready, let message = notifications.receive(until: readyBy) { ready = message.contains("READY=1") }
        #expect(ready, "the daemon said READY=1")
        #expect(try h.lsopen("alpha:warm-up").status == 0)

        // A connection the daemon already has, greeted, to be served at the limit.
        let served = try FrameConnection.connect(path: h.socket)
        defer { served.close() }
        try served.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "fd-limit-test")))
        _ = try served.receive(waitingFor: "welcome", deadline: .now + .seconds(10))

        // Room for 8 more descriptors, then connections until one is not welcomed, and
        // callers waiting in the backlog.
        let full = try DescriptorLimit(daemon: h, room: 8)
        defer { full.release() }
        #expect(DescriptorLimit.openDescriptors(h.daemonPID) >= full.limit - 1, "the daemon is at its descriptor limit")
        // The first caller at the limit reads why it is refused.
        if case .failure(let error) = full.refusal?.message {
            #expect(error.code == .unavailable && error.message.contains("LimitNOFILE"), "\(error)")
        } else {
            Issue.record("the caller at the limit got no refusal naming LimitNOFILE: \(String(describing: full.refusal)), unanswered: \(full.unanswered)")
        }

        // Over a few watchdog intervals: pings continue, the open connection is served, and
        // the daemon does not spin (CPU seconds well under the wall-clock seconds).
        notifications.drain()
        let cpuBefore = Self.cpuSeconds(h.daemonPID)
        let start = Date()
        try served.send(Envelope(id: 1, .open(url: "alpha:at-the-limit", annotation: nil)))
        let answer = try served.receive(waitingFor: "the open's result", deadline: .now + .seconds(20))
        if case .openResult(let outcome) = answer.message {
            #expect(outcome.opened, "\(outcome)")
        } else {
            Issue.record("unexpected answer \(answer)")
        }
        try served.send(Envelope(id: 2, .canOpen(url: "alpha:x")))
        _ = try served.receive(waitingFor: "canOpen's answer", deadline: .now + .seconds(20))
        var pings = 0
        let pingsBy = Date().addingTimeInterval(20)
        while pings < 4, let message = notifications.receive(until: pingsBy) {
            if message.contains("WATCHDOG=1") { pings += 1 }
        }
        let elapsed = Date().timeIntervalSince(start)
        let cpu = Self.cpuSeconds(h.daemonPID) - cpuBefore
        #expect(pings == 4, "watchdog pings at the limit: \(pings)")
        #expect(cpu < 0.3 * elapsed, "the daemon used \(cpu) s of CPU in \(elapsed) s at the descriptor limit")
        #expect(h.daemonOutput.contains("limit LimitNOFILE reached"))

        // Descriptors free up: new callers are accepted again.
        full.release()
        try h.eventually("new connections are accepted again", within: 20) {
            (try? h.lsopen("alpha:after-the-limit", timeout: 10).status) == 0
        }
    }
}
