import LaunchServicesProtocol
import NIOCore

/// Bytes the daemon wrote, cut back into envelopes (4-byte length, then the body).
struct FrameBuffer {
    private var bytes: [UInt8] = []

    mutating func append(_ buffer: ByteBuffer) {
        bytes.append(contentsOf: buffer.readableBytesView)
    }

    /// The next whole envelope, if one has arrived.
    mutating func next() -> Envelope? {
        // No limit of its own: the daemon's output is what is under test.
        guard let range = bytes.withUnsafeBytes({ try? Frame.nextBody($0, limit: .max) }) else { return nil }
        let body = Array(bytes[range])
        bytes.removeFirst(range.upperBound)
        return try? Envelope.decode(body)
    }
}
