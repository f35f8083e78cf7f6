import LaunchServicesProtocol
import NIOCore

/// Bytes the daemon wrote, cut back into envelopes (4-byte length, then the body). A frame
/// whose body does not decode is not dropped in silence: what the decoder said is kept in
/// `failures`, for the test to see, and the frames after it are still read.
package struct FrameBuffer {
    private var bytes: [UInt8] = []
    /// The frames that did not decode, in order: their length and the decoder's reason.
    package private(set) var failures: [String] = []

    package init() {}

    package mutating func append(_ buffer: ByteBuffer) {
        bytes.append(contentsOf: buffer.readableBytesView)
    }

    /// The next whole envelope that decodes, if one has arrived.
    package mutating func next() -> Envelope? {
        while bytes.count >= Frame.headerLength {
            let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard bytes.count >= Frame.headerLength + length else { return nil }
            let body = Array(bytes[Frame.headerLength..<(Frame.headerLength + length)])
            bytes.removeFirst(Frame.headerLength + length)
            do {
                return try Envelope.decode(body)
            } catch {
                failures.append("a frame of \(length) bytes did not decode: \(error)")
            }
        }
        return nil
    }
}
