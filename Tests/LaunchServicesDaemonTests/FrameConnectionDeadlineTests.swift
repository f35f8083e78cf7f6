#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// `FrameConnection.receive` waits in a blocking read whose deadline is the kernel's receive
/// timeout (`SO_RCVTIMEO`), set once per connection and changed only when it would not do:
/// a deadline is still kept, an earlier short one does not cut a later long wait short, the
/// idle loop's wait without deadline is not ended by one left behind, and a descriptor that
/// does not block is polled. Each test runs on a socketpair, the peer written by the test.
@Suite struct FrameConnectionDeadlineTests {
    /// Our end (`connection`) and the peer's raw descriptor.
    private static func pair(nonBlocking: Bool = false) throws -> (FrameConnection, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw ClientError.system(call: "socketpair", errno: errno) }
        if nonBlocking { _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) }
        return (FrameConnection(fd: fds[0]), fds[1])
    }

    private static func write(_ peer: Int32, _ envelope: Envelope, after: UInt32 = 0) {
        let bytes = Frame.encode(envelope)
        Thread.detachNewThread {
            if after > 0 { usleep(after) }
            _ = bytes.withUnsafeBytes { Glibc.write(peer, $0.baseAddress, $0.count) }
        }
    }

    private static func timesOut(_ connection: FrameConnection, within: Duration) -> Bool {
        do {
            _ = try connection.receive(waitingFor: "nothing", deadline: .now + within)
            return false
        } catch {
            if case .timedOut = error { return true }
            return false
        }
    }

    @Test("a silent peer: the receive ends with timedOut, not before its deadline and well before ten times it", arguments: [false, true])
    func silentPeerTimesOut(nonBlocking: Bool) throws {
        let (connection, peer) = try Self.pair(nonBlocking: nonBlocking)
        defer { close(peer) }
        let start = ContinuousClock.now
        #expect(Self.timesOut(connection, within: .milliseconds(200)))
        let took = ContinuousClock.now - start
        #expect(took >= .milliseconds(200))
        #expect(took < .seconds(2))
    }

    @Test("after a short deadline passed, a long one waits for a frame that comes later than the short one", arguments: [false, true])
    func shortDeadlineDoesNotCutALongOne(nonBlocking: Bool) throws {
        let (connection, peer) = try Self.pair(nonBlocking: nonBlocking)
        defer { close(peer) }
        #expect(Self.timesOut(connection, within: .milliseconds(30)))
        Self.write(peer, Envelope(id: 7, .queryResult(json: "{}")), after: 300_000)
        let envelope = try connection.receive(waitingFor: "the answer", deadline: .now + .seconds(10))
        #expect(envelope == Envelope(id: 7, .queryResult(json: "{}")))
    }

    @Test("the wait without deadline is not ended by a receive timeout a deadline left behind")
    func waitWithoutDeadlineOutlastsAnOldTimeout() throws {
        let (connection, peer) = try Self.pair()
        defer { close(peer) }
        #expect(Self.timesOut(connection, within: .milliseconds(20)))
        Self.write(peer, Envelope(id: 0, .notify(.didBecomeActive)), after: 300_000)
        let envelope = try connection.receiveWithoutDeadline(waitingFor: "the next event")
        #expect(envelope == Envelope(id: 0, .notify(.didBecomeActive)))
    }

    @Test("frames that arrive in pieces and several at once, with a deadline on every receive")
    func piecesAndBatches() throws {
        let (connection, peer) = try Self.pair()
        defer { close(peer) }
        let first = Frame.encode(Envelope(id: 1, .queryResult(json: String(repeating: "x", count: 3000))))
        let second = Frame.encode(Envelope(id: 2, .queryResult(json: "y")))
        Thread.detachNewThread {
            _ = first.withUnsafeBytes { Glibc.write(peer, $0.baseAddress, 10) }
            usleep(50_000)
            let rest = Array(first[10...]) + second
            _ = rest.withUnsafeBytes { Glibc.write(peer, $0.baseAddress, $0.count) }
        }
        #expect(try connection.receive(waitingFor: "1", deadline: .now + .seconds(10)).id == 1)
        #expect(try connection.receive(waitingFor: "2", deadline: .now + .seconds(10)).id == 2)
    }
}
