import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// `FrameConnection.receiveWithoutDeadline` reads at once (the read waits on a blocking
/// descriptor), and falls back to polling on one that does not block; `receive` with a
/// deadline polls and times out. Each: frames written later by another thread, split across writes.
@Suite("FrameConnection: receiving with and without a deadline")
struct FrameConnectionReceiveTests {
    /// A socket pair; `nonBlocking` makes the receiving end not block.
    static func pair(nonBlocking: Bool) throws -> (receiving: FrameConnection, sending: Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        if nonBlocking { _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) }
        return (FrameConnection(fd: fds[0]), fds[1])
    }

    /// Writes `count` frames from another thread after a pause, each in two writes.
    static func writeLater(_ fd: Int32, count: Int) -> Thread {
        let thread = Thread {
            for i in 0..<count {
                usleep(20_000)
                let bytes = Frame.encode(Envelope(id: UInt32(i + 1), .canOpen(url: "s:\(i)")))
                let half = bytes.count / 2
                bytes.withUnsafeBytes { raw in
                    _ = write(fd, raw.baseAddress!, half)
                    usleep(5_000)
                    _ = write(fd, raw.baseAddress! + half, bytes.count - half)
                }
            }
        }
        thread.start()
        return thread
    }

    @Test("no deadline: every frame arrives, on a blocking and on a non-blocking descriptor", arguments: [false, true])
    func withoutDeadline(nonBlocking: Bool) throws {
        let (connection, sending) = try Self.pair(nonBlocking: nonBlocking)
        defer {
            connection.close()
            close(sending)
        }
        _ = Self.writeLater(sending, count: 3)
        for i in 0..<3 {
            let envelope = try connection.receiveWithoutDeadline(waitingFor: "frame \(i)")
            #expect(envelope.id == UInt32(i + 1))
            guard case .canOpen(let url) = envelope.message else {
                Issue.record("not a canOpen: \(envelope.message)")
                continue
            }
            #expect(url == "s:\(i)")
        }
    }

    @Test("no deadline: the peer closing ends the wait with connectionClosed")
    func closedWithoutDeadline() throws {
        let (connection, sending) = try Self.pair(nonBlocking: false)
        defer { connection.close() }
        let closer = Thread {
            usleep(20_000)
            close(sending)
        }
        closer.start()
        #expect(throws: ClientError.self) { try connection.receiveWithoutDeadline(waitingFor: "a frame") }
    }

    @Test("a deadline with nothing sent times out")
    func deadline() throws {
        let (connection, sending) = try Self.pair(nonBlocking: false)
        defer {
            connection.close()
            close(sending)
        }
        #expect(throws: ClientError.self) { try connection.receive(waitingFor: "a frame", deadline: .now + .milliseconds(30)) }
    }
}
