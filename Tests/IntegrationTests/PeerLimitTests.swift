import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// What one peer may make the daemon hold: unread replies, idle connections, requests in
/// flight. Each limit ends in a named error or a logged disconnect, never a spin or a stall.
@Suite("Peer limits")
struct PeerLimitTests {
    static func hello(_ connection: FrameConnection) throws {
        try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "limits-test")))
        _ = try connection.receive(waitingFor: "welcome", deadline: .now + .seconds(10))
    }

    /// `VmHWM` (peak resident set) of a process, in bytes.
    static func peakResident(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// User + system CPU time of a process, in clock ticks.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // After ")": state is field 3; utime and stime are fields 14 and 15.
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    @Test("a peer that never reads: the daemon holds at most the unread-bytes cap, then disconnects it, naming the limit")
    func neverReads() throws {
        let cap = 16 << 20
        let h = try DaemonHarness(apps: [], config: #"{"connections": {"maximumQueuedOutputBytes": \#(cap)}}"#)
        defer { h.stop() }
        let big = h.root + "/big"
        try Data((0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: big))
        #expect(try h.run("lsctl", ["pasteboard", "copy", "--name", "big", "--type", "public.data"], stdin: big).status == 0)
        let before = Self.peakResident(h.daemonPID)

        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        try Self.hello(connection)
        // 1,000 pastes of 900 KB (27 KB of requests), and not one byte of the answers read.
        var requests: [UInt8] = []
        for id in 1...1000 {
            requests += Frame.encode(Envelope(id: UInt32(id), .pasteboard(PasteboardRequest(.paste, name: "big"))))
        }
        try connection.send(requests)
        try h.eventually("the daemon disconnects the peer, naming the limit") {
            h.daemonOutput.contains("connections.maximumQueuedOutputBytes")
        }
        let growth = Self.peakResident(h.daemonPID) - before
        // The cap, one more reply in the making, and the allocator's slack.
        #expect(growth < cap + 32 << 20, "peak RSS grew by \(growth >> 20) MiB")
        // The peer finds its connection closed once it reads what was already on its way.
        var ended = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !ended && ContinuousClock.now < deadline {
            do { _ = try connection.receive(waitingFor: "the rest", deadline: deadline) } catch { ended = true }
        }
        #expect(ended)
        // Everyone else is served.
        #expect(try h.lsctl("pasteboard", "list").status == 0)
    }

    @Test("1,100 idle connections under a 1,024-descriptor limit: new callers get an answer, the daemon idles, silent peers are closed at the hello deadline")
    func idleConnectionFlood() throws {
        // This process may take the user's whole allowance here (its share is the user's
        // limit, nothing is kept), so the flood meets the per-user limit itself;
        // ConnectionShareTests covers the shares that keep one process from doing so by default.
        let h = try DaemonHarness(apps: [.test("alpha")], config: #"{"connections": {"firstMessageSeconds": 3, "maximumPerProcess": 256, "reservedForFirstConnections": 0}}"#)
        defer { h.stop() }
        #expect(try ChildProcess.run("prlimit", ["--pid", "\(h.daemonPID)", "--nofile=1024:1024"], environment: ProcessInfo.processInfo.environment, scratch: h.root, timeout: 10).status == 0)
        let limits = (try? String(contentsOfFile: "/proc/\(h.daemonPID)/limits", encoding: .utf8)) ?? ""
        #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max open files") && $0.contains(" 1024 ") }, "\(limits)")
        // This process needs room for its 1,100 sockets.
        var own = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own)
        if own.rlim_cur < 4096 {
            own.rlim_cur = min(4096, own.rlim_max)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own)
        }
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<1100 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { break }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                let bytes = Array(h.socket.utf8)
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            sockets.append(fd)
        }
        #expect(sockets.count == 1100)
        // A new caller is answered within a second: opened, or refused naming the limit it
        // met (the user's connections, or the daemon's descriptors while refused connections
        // still hold theirs).
        let r = try h.lsopen("--json", "--timeout", "1", "alpha:during-flood", timeout: 10)
        if r.status != 0 {
            #expect(r.errorCode == "unavailable", "\(r.stdout) \(r.stderr)")
            let message = r.errorMessage ?? r.stderr
            #expect(message.contains("connections.maximumPerUser") || message.contains("LimitNOFILE"), "\(r.stdout) \(r.stderr)")
        }
        // The daemon is not spinning: under half a CPU over one second.
        let ticks = Self.cpuTicks(h.daemonPID)
        sleep(1)
        let used = Self.cpuTicks(h.daemonPID) - ticks
        #expect(used < Int(sysconf(Int32(_SC_CLK_TCK))) / 2, "the daemon used \(used) ticks in 1 s")
        // At the hello deadline the silent connections are closed, and callers are served again.
        try h.eventually("the silent connections are closed", within: 15) {
            (try? h.lsopen("alpha:after-flood", timeout: 5).status) == 0
        }
        var closed = 0
        for fd in sockets {
            var byte: UInt8 = 0
            // Each reads its refusal and then end-of-file, or was reset.
            while true {
                let n = read(fd, &byte, 1)
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { closed += 1; break }
                if n < 0 { break }
            }
        }
        #expect(closed == 1100, "\(closed) of 1100 connections were closed by the daemon")
        let log = h.daemonOutput
        let reports = log.components(separatedBy: "limit connections.maximumPerUser reached").count - 1
        #expect(reports == 1, "logged once, not per refusal: \(reports)")
        #expect(log.contains("limit connections.firstMessageSeconds reached"))
    }

    @Test("100 concurrent clients × 50 warm opens: none refused, none lost, none delivered twice")
    func hundredClients() throws {
        // The 100 clients are threads of this one process: its share must hold them.
        let h = try DaemonHarness(apps: [.test("counter")], config: #"{"connections": {"maximumPerProcess": 128}}"#)
        defer { h.stop() }
        #expect(try h.lsopen("counter:warm-up").status == 0)
        let failures = ResultBox()
        // 100 threads, not concurrentPerform (which runs one per core): all 100 clients
        // connect first, then open at once, so up to 100 opens wait for the app together.
        let connected = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for client in 0..<100 {
            connected.enter()
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                guard let connection = try? LaunchServicesClient(socketPath: h.socket, program: "client-\(client)") else {
                    failures.append(1)
                    connected.leave()
                    return
                }
                defer { connection.close() }
                connected.leave()
                go.wait()
                for n in 0..<50 {
                    do {
                        let outcome = try connection.open("counter:c\(client)-\(n)", timeout: .seconds(120))
                        if !outcome.opened { failures.append(1) }
                    } catch {
                        failures.append(1)
                    }
                }
            }
        }
        #expect(connected.wait(timeout: .now() + 60) == .success)
        for _ in 0..<100 { go.signal() }
        #expect(finished.wait(timeout: .now() + 300) == .success)
        #expect(failures.values.count == 0, "opens failed")
        let delivered = h.eventNames().filter { $0.hasPrefix("open url=counter:c") }.map { $0.split(separator: " ")[1] }
        #expect(delivered.count == 5000, "\(delivered.count) deliveries")
        #expect(Set(delivered).count == 5000, "no duplicates")
    }

    @Test("a flooder gets its own named refusal, does not fail another caller, and its queue is dropped when it leaves")
    func flooder() throws {
        let h = try DaemonHarness(apps: [.test("slowpoke", "--open-delay=20")])
        defer { h.stop() }
        #expect(try h.lsopen("slowpoke:warm-up").status == 0)
        let connection = try FrameConnection.connect(path: h.socket)
        try Self.hello(connection)
        var requests: [UInt8] = []
        for id in 1...138 {
            requests += Frame.encode(Envelope(id: UInt32(id), .open(url: "slowpoke:flood-\(id)", annotation: nil)))
        }
        try connection.send(requests)
        var refused: [OpenError] = []
        while refused.count < 10 {
            let envelope = try connection.receive(waitingFor: "the refusals past the limit", deadline: .now + .seconds(20))
            if case .openResult(let outcome) = envelope.message, let error = outcome.error { refused.append(error) }
        }
        #expect(refused.allSatisfy { $0.code == .unavailable && $0.message.contains("connections.maximumPendingRequests") }, "\(refused)")
        // Another caller, meanwhile, is served.
        let victim = try h.lsopen("--json", "slowpoke:victim-1", timeout: 60)
        #expect(victim.status == 0, "\(victim.stdout)")
        // The flooder leaves: its queued opens are dropped, not run. Those already delivered
        // to the app (at most maximumOpensInFlightPerApp, 16 by default) still finish.
        connection.close()
        let afterLeaving = h.eventNames().filter { $0.contains("url=slowpoke:flood-") }.count
        #expect(try h.lsopen("slowpoke:victim-2").status == 0)
        let delivered = h.eventNames().filter { $0.contains("url=slowpoke:flood-") }.count
        #expect(delivered <= afterLeaving + 16 + 1, "\(delivered - afterLeaving) flood opens ran after the flooder left")
        #expect(delivered < 128)
    }
}
