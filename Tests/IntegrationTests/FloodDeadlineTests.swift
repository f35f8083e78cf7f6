import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Deadlines under a flood of opens, with a real daemon and real app processes: an open's
/// `openURL` deadline measures the app's progress on it, not the opens queued in front of it,
/// so a slow but steady app is never declared hung, and a hung one still is.
@Suite("Deadlines under a flood")
struct FloodDeadlineTests {
    /// Connections from this process, each greeted; closed by the caller.
    static func connect(_ count: Int, to h: DaemonHarness) throws -> [FrameConnection] {
        try (0..<count).map { _ in
            let connection = try FrameConnection.connect(path: h.socket)
            try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "flood-test")))
            _ = try connection.receive(waitingFor: "welcome", deadline: .now + .seconds(20))
            return connection
        }
    }

    /// Sends `perConnection` opens of `scheme:flood-C-N` on every connection at once (each
    /// connection's opens in one write), then reads every answer, by "C-N".
    static func flood(_ connections: [FrameConnection], scheme: String, perConnection: Int) throws -> [String: OpenOutcome] {
        for (c, connection) in connections.enumerated() {
            try connection.send((1...perConnection).flatMap { n in
                Frame.encode(Envelope(id: UInt32(n), .open(url: "\(scheme):flood-\(c)-\(n)", annotation: nil)))
            })
        }
        var outcomes: [String: OpenOutcome] = [:]
        for (c, connection) in connections.enumerated() {
            var answered = 0
            while answered < perConnection {
                let envelope = try connection.receive(waitingFor: "the answers to connection \(c)'s opens", deadline: .now + .seconds(120))
                guard case .openResult(let outcome) = envelope.message else { continue }
                outcomes["\(c)-\(envelope.id)"] = outcome
                answered += 1
            }
        }
        return outcomes
    }

    @Test("30 opens from 5 connections to an app that answers each in 0.4 s, with a 2 s deadline: every one opened, the app never killed")
    func slowButSteady() throws {
        let h = try DaemonHarness(apps: [.test("steady", "--open-delay=400")], config: #"{"deadlines": {"launch": 20, "openURL": 2}}"#)
        defer { h.stop() }
        #expect(try h.lsopen("steady:warm-up").status == 0)
        let pid = try #require(h.appPIDs.first)
        let connections = try Self.connect(5, to: h)
        defer { connections.forEach { $0.close() } }
        // 16 at a time in flight (maximumOpensInFlightPerApp): the last of them is answered
        // 6.4 s after it was sent, and the last of all 12 s after the first.
        let outcomes = try Self.flood(connections, scheme: "steady", perConnection: 6)
        #expect(outcomes.count == 30)
        for (open, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
            #expect(outcome.opened, "\(open): \(outcome.error.map { "\($0.code): \($0.message)" } ?? "")")
        }
        #expect(isAlive(pid), "the app was not killed")
        #expect(h.appPIDs == [pid], "nor launched again")
        #expect(h.eventNames(pid: pid).filter { $0.hasPrefix("open url=steady:flood-") }.count == 30)
        #expect(!h.daemonOutput.contains("terminating"), "\(h.daemonOutput)")
    }

    @Test("20 opens from 4 connections to an app that hangs in open, with a 2 s deadline: each copy is killed at its deadline and every open answered timeout")
    func hungApp() throws {
        let h = try DaemonHarness(apps: [.test("stuck", "--open=hang")], config: #"{"deadlines": {"launch": 20, "openURL": 2}}"#)
        defer { h.stop() }
        let connections = try Self.connect(4, to: h)
        defer { connections.forEach { $0.close() } }
        let outcomes = try Self.flood(connections, scheme: "stuck", perConnection: 5)
        #expect(outcomes.count == 20)
        for (open, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
            #expect(outcome.error?.code == .timeout, "\(open): \(outcome)")
            #expect(outcome.error?.phase == .openURL, "\(open): \(outcome)")
        }
        // One open per copy was the hung one; the others were sent to it behind that one.
        let pids = h.appPIDs
        #expect(!pids.isEmpty)
        let hung = outcomes.values.filter { $0.error?.message == "test.stuck did not finish openURL within 2 s; it was terminated" }
        let behind = outcomes.values.filter { $0.error?.message.contains("was terminated before it answered this open") == true }
        #expect(hung.count == pids.count, "one deadline per copy: \(pids.count) copies")
        #expect(hung.count + behind.count == 20)
        for pid in pids {
            try h.eventually("copy \(pid) is killed") { !isAlive(pid) }
        }
        // The daemon says why it ended each copy (a copy whose connection closed first may
        // also be logged as disconnected).
        let kills = h.daemonOutput.split(separator: "\n").filter { $0.contains("terminating test.stuck") && $0.contains("did not finish openURL") }
        #expect(kills.count == pids.count, "\(kills)")
    }
}
