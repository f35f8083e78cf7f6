import LaunchServicesProtocol
import NIOCore

/// Bytes the daemon wrote, cut back into envelopes (4-byte length, then the body). A frame
/// whose body does not decode is not dropped in silence: what the decoder said is kept in
/// `failures`, for the test to see, and the frames after it are still read.
package struct FrameBuffer {
    private var bytes: [UInt8] = []
    /// What could not be read, in order: each frame that did not decode (its length and the
    /// decoder's reason), or the length prefix the splitter refused.
    package private(set) var failures: [String] = []
    /// A length prefix was refused: where the next frame starts is unknown.
    private var framingLost = false

    package init() {}

    package mutating func append(_ buffer: ByteBuffer) {
        guard !framingLost else { return }
        bytes.append(contentsOf: buffer.readableBytesView)
    }

    /// The next whole envelope that decodes, if one has arrived. After a length prefix the
    /// splitter refuses (an empty or too short frame) no frame boundary is known: it is
    /// reported with what was buffered, and nothing more is read (rather than waiting for
    /// bytes forever, or reading the middle of a frame as the start of one).
    package mutating func next() -> Envelope? {
        while !framingLost {
            let range: Range<Int>?
            do {
                // No limit of its own: the daemon's output is what is under test.
                range = try bytes.withUnsafeBytes { try Frame.nextBody($0, limit: .max) }
            } catch {
                failures.append("a length prefix was refused (\(error)); the \(bytes.count) bytes from it on were not read")
                bytes = []
                framingLost = true
                return nil
            }
            guard let range else { return nil }
            let body = Array(bytes[range])
            bytes.removeFirst(range.upperBound)
            do {
                return try Envelope.decode(body)
            } catch {
                failures.append("a frame of \(body.count) bytes did not decode: \(error)")
            }
        }
        return nil
    }
}
