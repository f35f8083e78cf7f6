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
        guard bytes.count >= Frame.headerLength else { return nil }
        let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard bytes.count >= Frame.headerLength + length else { return nil }
        let body = Array(bytes[Frame.headerLength..<(Frame.headerLength + length)])
        bytes.removeFirst(Frame.headerLength + length)
        return try? Envelope.decode(body)
    }
}
