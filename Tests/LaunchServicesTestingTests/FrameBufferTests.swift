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
        let garbage: [UInt8] = [0, 0, 0, 3, 0xFF, 0xFE, 0xFD]
        var frames = FrameBuffer()
        frames.append(ByteBuffer(bytes: Frame.encode(before) + garbage + Frame.encode(after)))
        var read: [Envelope] = []
        while let envelope = frames.next() { read.append(envelope) }
        #expect(read == [before, after])
        #expect(frames.failures.count == 1)
        #expect(frames.failures.first?.contains("3 bytes") == true)
    }
}
