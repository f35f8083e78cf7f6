import LaunchServicesProtocol
import LaunchServicesTesting
import NIOCore
import Testing

/// The kit's reader of what the daemon wrote: a frame that does not decode is reported, and
/// the frames after it are still read (it once ended reading there, silently).
@Suite struct FrameBufferTests {
    @Test func aFrameThatDoesNotDecodeIsReportedAndTheNextIsStillRead() throws {
        let before = Envelope(id: 1, .welcome(version: Frame.protocolVersion, identity: "com.example.notes"))
        let after = Envelope(id: 2, .welcome(version: Frame.protocolVersion, identity: "com.example.shop"))
        // A whole frame (kind byte and request id) of a kind that does not exist.
        let garbage: [UInt8] = [0, 0, 0, 5, 0xFF, 0, 0, 0, 9]
        var frames = FrameBuffer()
        frames.append(ByteBuffer(bytes: Frame.encode(before) + garbage + Frame.encode(after)))
        var read: [Envelope] = []
        while let envelope = frames.next() { read.append(envelope) }
        #expect(read == [before, after])
        #expect(frames.failures.count == 1)
        #expect(frames.failures.first?.contains("5 bytes") == true)
    }

    /// A length prefix the splitter refuses (shorter than a kind byte and a request id) is
    /// reported, not waited on forever as if more bytes were to come.
    @Test func aRefusedLengthPrefixIsReported() throws {
        let before = Envelope(id: 1, .welcome(version: Frame.protocolVersion, identity: "com.example.notes"))
        var frames = FrameBuffer()
        frames.append(ByteBuffer(bytes: Frame.encode(before) + [0, 0, 0, 3, 0xFF, 0xFE, 0xFD]))
        var read: [Envelope] = []
        while let envelope = frames.next() { read.append(envelope) }
        #expect(read == [before])
        #expect(frames.failures.count == 1)
        #expect(frames.failures.first?.contains("7 bytes") == true)
    }
}
