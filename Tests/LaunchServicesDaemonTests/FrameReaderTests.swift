import LaunchServicesProtocol
@testable import LaunchServicesDaemon
import NIOCore
import NIOEmbedded
import Testing

/// `FrameReader`, the daemon's splitter on its own connections (`ConnectionHandler`): bytes
/// in, frame bodies out, however the bytes are split, and a refused length ends the splitting.
@Suite("FrameReader")
struct FrameReaderTests {
    let allocator = ByteBufferAllocator()

    func frame(_ id: UInt32, _ message: Message = .query(topic: "status")) -> [UInt8] {
        Frame.encode(Envelope(id: id, message))
    }

    func bodies(_ reader: inout FrameReader) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while var body = try reader.next() { out.append(body.readBytes(length: body.readableBytes)!) }
        return out
    }

    @Test("a frame split at any point comes out whole, once, only when its last byte arrives")
    func splitAnywhere() throws {
        let f = frame(2, .canOpen(url: "todolist://www.acme.com"))
        for cut in 1..<f.count {
            var reader = FrameReader(maximumLength: 64)
            reader.append(allocator.buffer(bytes: f[..<cut]))
            #expect(try bodies(&reader).isEmpty, "cut at \(cut)")
            reader.append(allocator.buffer(bytes: f[cut...]))
            #expect(try bodies(&reader) == [Array(f.dropFirst(4))], "cut at \(cut)")
        }
    }

    @Test("several frames in one read come out in order; a trailing partial frame waits for the rest")
    func several() throws {
        var reader = FrameReader(maximumLength: 64)
        let frames = (1...4).map { frame(UInt32($0), .query(topic: "topic-\($0)")) }
        let half = frames[3].count / 2
        reader.append(allocator.buffer(bytes: frames[0] + frames[1] + frames[2] + frames[3][..<half]))
        #expect(try bodies(&reader) == frames[0..<3].map { Array($0.dropFirst(4)) })
        reader.append(allocator.buffer(bytes: frames[3][half...]))
        #expect(try bodies(&reader) == [Array(frames[3].dropFirst(4))])
    }

    @Test("bytes appended while a body is held come out after it, in order")
    func appendWhileHolding() throws {
        var reader = FrameReader(maximumLength: 64)
        let a = frame(1), b = frame(2)
        reader.append(allocator.buffer(bytes: a + b[..<3]))
        var first = try #require(try reader.next())
        reader.append(allocator.buffer(bytes: b[3...]))
        #expect(first.readBytes(length: first.readableBytes) == Array(a.dropFirst(4)))
        #expect(try bodies(&reader) == [Array(b.dropFirst(4))])
    }

    @Test("a long stream split into many reads loses nothing when the read bytes are compacted")
    func longStream() throws {
        var reader = FrameReader(maximumLength: 1 << 20)
        let frames = (1...400).map { frame(UInt32($0), .query(topic: String(repeating: "t", count: $0 % 37))) }
        let stream = frames.flatMap { $0 }
        var got: [[UInt8]] = []
        var at = 0
        while at < stream.count {
            let end = min(stream.count, at + 61)
            reader.append(allocator.buffer(bytes: stream[at..<end]))
            got += try bodies(&reader)
            at = end
        }
        #expect(got == frames.map { Array($0.dropFirst(4)) })
    }

    @Test("a good frame before an oversized length still comes out; the length is refused, and nothing after it")
    func goodThenOversized() throws {
        var reader = FrameReader(maximumLength: 64)
        let good = frame(5)
        reader.append(allocator.buffer(bytes: good + [0, 0, 0x03, 0xE8]))
        #expect(try reader.next().map { Array($0.readableBytesView) } == Array(good.dropFirst(4)))
        #expect(throws: WireError.frameTooLarge(length: 1_000, limit: 64)) { try reader.next() }
        #expect(reader.failure == .frameTooLarge(length: 1_000, limit: 64))
        reader.append(allocator.buffer(bytes: frame(6)))
        #expect(try reader.next() == nil)
    }

    @Test("empty and too-short declared lengths are refused")
    func tooShort() throws {
        var empty = FrameReader(maximumLength: 64)
        empty.append(allocator.buffer(bytes: [0, 0, 0, 0]))
        #expect(throws: WireError.emptyFrame) { try empty.next() }
        var short = FrameReader(maximumLength: 64)
        short.append(allocator.buffer(bytes: [0, 0, 0, 4, 1, 2, 3, 4]))
        #expect(throws: WireError.truncated("frame of 4 bytes is shorter than a kind byte and a request id")) { try short.next() }
    }
}

/// `ConnectionHandler` reading frames on an embedded channel, as NIO's `ByteToMessageHandler`
/// with `FrameDecoder` did before it: what the daemon is told, in order.
@Suite("ConnectionHandler's frames")
struct ConnectionHandlerFrameTests {
    final class Recorder: ConnectionEvents {
        var heard: [String] = []
        var onReceive: ((Envelope) -> Void)?

        func connectionOpened(channel: Channel, kind: ClientConnection.Kind, peer: PeerCredentials?) -> ClientConnection? {
            ClientConnection(channel: channel, kind: kind, identity: "test")
        }
        func received(_ envelope: Envelope, from connection: ClientConnection) {
            heard.append("received \(envelope.id)")
            onReceive?(envelope)
        }
        func protocolViolation(_ text: String, on connection: ClientConnection) { heard.append("violation \(text)") }
        func peerFinishedSending(_ connection: ClientConnection) { heard.append("finished") }
        func connectionEnded(_ connection: ClientConnection, error: Error) { heard.append("ended") }
        func connectionClosed(_ connection: ClientConnection) { heard.append("closed") }
        func readBatchEnded() {}
    }

    func channel(_ recorder: Recorder) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ConnectionHandler(events: recorder, kind: .app("a"), maximumFrameLength: 64))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/x")).wait()
        return channel
    }

    func frame(_ id: UInt32) -> [UInt8] { Frame.encode(Envelope(id: id, .query(topic: "status"))) }

    @Test("frames in pieces reach the daemon whole and in order")
    func pieces() throws {
        let recorder = Recorder()
        let c = try channel(recorder)
        let stream = frame(1) + frame(2) + frame(3)
        try c.writeInbound(c.allocator.buffer(bytes: stream[..<7]))
        try c.writeInbound(c.allocator.buffer(bytes: stream[7...]))
        #expect(recorder.heard == ["received 1", "received 2", "received 3"])
    }

    @Test("a read that arrives while a frame is handed on is split after the frames before it")
    func reentrantRead() throws {
        let recorder = Recorder()
        let c = try channel(recorder)
        recorder.onReceive = { envelope in
            guard envelope.id == 1 else { return }
            _ = try? c.writeInbound(c.allocator.buffer(bytes: self.frame(3)))
        }
        try c.writeInbound(c.allocator.buffer(bytes: frame(1) + frame(2)))
        #expect(recorder.heard == ["received 1", "received 2", "received 3"])
    }

    @Test("a refused length is a protocol violation; bytes after it are reported as ByteToMessageHandler reported them")
    func refused() throws {
        let recorder = Recorder()
        let c = try channel(recorder)
        try c.writeInbound(c.allocator.buffer(bytes: frame(1) + [0, 0, 0x03, 0xE8]))
        try c.writeInbound(c.allocator.buffer(bytes: frame(2)))
        #expect(recorder.heard.count == 3)
        #expect(recorder.heard.prefix(2) == ["received 1", "violation \(WireError.frameTooLarge(length: 1_000, limit: 64).description)"])
        #expect(recorder.heard[2].hasPrefix("violation dataReceivedInErrorState"), "\(recorder.heard)")
    }

    @Test("the end of input hands on the frames complete by then before it says so; later bytes are not split")
    func endOfInput() throws {
        let recorder = Recorder()
        let c = try channel(recorder)
        recorder.onReceive = { envelope in
            // The first frame's handling ends the input while the second is still buffered.
            if envelope.id == 1 { c.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        }
        try c.writeInbound(c.allocator.buffer(bytes: frame(1) + frame(2)))
        try c.writeInbound(c.allocator.buffer(bytes: frame(3)))
        #expect(recorder.heard == ["received 1", "finished", "received 2"])
    }
}
