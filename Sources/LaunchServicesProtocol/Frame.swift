/// Framing: every message travels as `u32 length (big-endian)` followed by that many bytes.
public enum Frame {
    /// The protocol version spoken; a hello with another version is refused.
    public static let protocolVersion: UInt64 = 1
    /// The largest frame accepted by default (1 MiB). Larger declared lengths are refused
    /// before any of the body is buffered.
    public static let defaultMaximumLength = 1 << 20
    /// The largest frame a peer accepts *from* the daemon. Larger than what the daemon
    /// accepts, because its answers can outgrow any request: a listing of thousands of
    /// apps, or an open of the largest size relayed with the daemon's own fields added.
    /// It covers the largest `maximumFrameLength` a configuration may set (64 MiB) plus room.
    public static let maximumLengthFromDaemon = 65 << 20
    /// Size of the length prefix.
    public static let headerLength = 4
    /// Kind byte + request id.
    public static let minimumBodyLength = 5

    /// Encodes a message as a whole frame (length prefix included), ready to write.
    public static func encode(_ envelope: Envelope) -> [UInt8] {
        // Room for an open's answer with its phases (about 150 bytes) without growing.
        var writer = WireWriter(capacity: 224)
        writer.u32(0)
        envelope.encode(into: &writer)
        // Patched in the writer, whose array is the only reference: a copy taken out first
        // and then changed would copy every byte of the frame.
        writer.patchU32(at: 0, UInt32(writer.bytes.count - headerLength))
        return writer.bytes
    }

    /// Reads the length prefix at the start of `bytes`, validating it against `limit`.
    /// `nil` when fewer than four bytes are there yet.
    public static func declaredLength(_ bytes: UnsafeRawBufferPointer, limit: Int) throws(WireError) -> Int? {
        guard bytes.count >= headerLength else { return nil }
        let length = Int(UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
        guard length >= minimumBodyLength else { throw length == 0 ? .emptyFrame : .truncated("frame of \(length) bytes is shorter than a kind byte and a request id") }
        guard length <= limit else { throw .frameTooLarge(length: length, limit: limit) }
        return length
    }

    /// Where the first whole frame's body lies in `bytes` (which start at a length prefix);
    /// `nil` until all of it has arrived. The one splitter: the daemon's decoder, the
    /// client's connection and the testing kit each call it, with their own limit, so a
    /// length is validated (`declaredLength`) the same way on both ends of the socket.
    public static func nextBody(_ bytes: UnsafeRawBufferPointer, limit: Int) throws(WireError) -> Range<Int>? {
        guard let length = try declaredLength(bytes, limit: limit), bytes.count >= headerLength + length else { return nil }
        return headerLength..<(headerLength + length)
    }
}
