import LaunchServicesCore
import LaunchServicesProtocol
@testable import LaunchServicesDaemon
import NIOCore
import NIOEmbedded
import Testing

/// `FrameDecoder` inside a `ByteToMessageHandler` on an `EmbeddedChannel`: bytes in, frame
/// bodies out, however the bytes are split.
@Suite("FrameDecoder on an embedded channel")
struct FrameDecoderChannelTests {
    func channel(limit: Int = 64) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: limit)))
        return channel
    }

    func write(_ channel: EmbeddedChannel, _ bytes: some Sequence<UInt8>) throws {
        try channel.writeInbound(channel.allocator.buffer(bytes: Array(bytes)))
    }

    /// The next frame body the decoder passed on, or `nil`.
    func nextBody(_ channel: EmbeddedChannel) throws -> [UInt8]? {
        guard var buffer = try channel.readInbound(as: ByteBuffer.self) else { return nil }
        return buffer.readBytes(length: buffer.readableBytes)
    }

    func frame(_ id: UInt32, _ message: Message = .query(topic: "status")) -> [UInt8] {
        Frame.encode(Envelope(id: id, message))
    }

    @Test("one frame in one write comes out as its body, once")
    func single() throws {
        let c = try channel()
        let f = frame(1)
        try write(c, f)
        #expect(try nextBody(c) == Array(f.dropFirst(4)))
        #expect(try nextBody(c) == nil)
        #expect(try c.finish().isClean)
    }

    @Test("a frame split at any point comes out whole, only when its last byte arrives")
    func splitAnywhere() throws {
        let f = frame(2, .canOpen(url: "todolist://www.acme.com"))
        for cut in 1..<f.count {
            let c = try channel()
            try write(c, f[..<cut])
            #expect(try nextBody(c) == nil, "cut at \(cut)")
            try write(c, f[cut...])
            let body = try #require(try nextBody(c), "cut at \(cut)")
            #expect(try Envelope.decode(body) == Envelope(id: 2, .canOpen(url: "todolist://www.acme.com")))
            #expect(try nextBody(c) == nil)
        }
    }

    @Test("a frame dribbled in one byte per write")
    func byteByByte() throws {
        let c = try channel()
        let f = frame(3, .notify(.willEnterForeground))
        for byte in f.dropLast() {
            try write(c, [byte])
            #expect(try nextBody(c) == nil)
        }
        try write(c, [f.last!])
        #expect(try nextBody(c) == Array(f.dropFirst(4)))
    }

    @Test("several frames in one write come out one by one, in order; a trailing partial frame waits")
    func severalInOneWrite() throws {
        let c = try channel()
        let frames = (1...4).map { frame(UInt32($0), .query(topic: "topic-\($0)")) }
        let half = frames[3].count / 2
        try write(c, frames[0] + frames[1] + frames[2] + frames[3][..<half])
        for i in 0..<3 {
            let body = try #require(try nextBody(c))
            #expect(body == Array(frames[i].dropFirst(4)))
            #expect(try Envelope.decode(body) == Envelope(id: UInt32(i + 1), .query(topic: "topic-\(i + 1)")))
        }
        #expect(try nextBody(c) == nil)
        try write(c, frames[3][half...])
        #expect(try nextBody(c) == Array(frames[3].dropFirst(4)))
        #expect(try nextBody(c) == nil)
    }

    @Test("the end of one frame and the start of the next in one write")
    func straddling() throws {
        let c = try channel()
        let a = frame(1), b = frame(2)
        let stream = a + b
        try write(c, stream[..<(a.count - 2)])
        #expect(try nextBody(c) == nil)
        try write(c, stream[(a.count - 2)..<(a.count + 3)])
        #expect(try nextBody(c) == Array(a.dropFirst(4)))
        #expect(try nextBody(c) == nil)
        try write(c, stream[(a.count + 3)...])
        #expect(try nextBody(c) == Array(b.dropFirst(4)))
    }

    @Test("a body of exactly the limit is accepted")
    func exactlyTheLimit() throws {
        let c = try channel(limit: 64)
        let body = [0x21, 0, 0, 0, 9, 1, 0, 0, 0, 54] + [UInt8](repeating: 0x61, count: 54)
        #expect(body.count == 64)
        try write(c, [0, 0, 0, 64] + body)
        #expect(try nextBody(c) == body)
        #expect(try Envelope.decode(body) == Envelope(id: 9, .queryResult(json: String(repeating: "a", count: 54))))
    }

    @Test("an oversized declared length is refused at once, from the four header bytes alone")
    func oversized() throws {
        let c = try channel(limit: 64)
        #expect(throws: WireError.frameTooLarge(length: 65, limit: 64)) {
            try write(c, [0, 0, 0, 65])
        }
        #expect(try nextBody(c) == nil)
    }

    @Test("an oversized header split across writes is refused as soon as it is complete")
    func oversizedSplit() throws {
        let c = try channel(limit: 64)
        try write(c, [0x7F, 0xFF])
        #expect(try nextBody(c) == nil)
        #expect(throws: WireError.frameTooLarge(length: 0x7FFF_FFFF, limit: 64)) {
            try write(c, [0xFF, 0xFF])
        }
    }

    @Test("a good frame before an oversized one is still passed on")
    func goodThenOversized() throws {
        let c = try channel(limit: 64)
        let good = frame(5)
        #expect(throws: WireError.frameTooLarge(length: 1_000, limit: 64)) {
            try write(c, good + [0, 0, 0x03, 0xE8])
        }
        #expect(try nextBody(c) == Array(good.dropFirst(4)))
        #expect(try nextBody(c) == nil)
    }

    @Test("empty and too-short declared lengths are refused at once")
    func tooShort() throws {
        let empty = try channel()
        #expect(throws: WireError.emptyFrame) { try write(empty, [0, 0, 0, 0]) }
        let short = try channel()
        #expect(throws: WireError.truncated("frame of 4 bytes is shorter than a kind byte and a request id")) {
            try write(short, [0, 0, 0, 4, 1, 2, 3, 4])
        }
        #expect(try nextBody(short) == nil)
    }

    @Test("end of input in the middle of a frame passes nothing on and raises nothing")
    func partialAtEOF() throws {
        let c = try channel()
        try write(c, frame(1).dropLast(3))
        #expect(try nextBody(c) == nil)
        #expect(try c.finish().isClean)
    }
}
