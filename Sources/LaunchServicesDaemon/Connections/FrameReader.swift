import LaunchServicesProtocol
import NIOCore

/// Splits one connection's byte stream into frame bodies (`u32` big-endian length, then the
/// body), for the `ConnectionHandler` that owns it. A declared length over the limit is
/// refused at once, before any of it is buffered (`Frame.nextBody`, the one splitter).
///
/// Why not `FrameDecoder` in NIO's `ByteToMessageHandler`, as the daemon's socket path once
/// had: that handler is generic, and NIO's code is not specialised for a decoder of this
/// module, so each read paid its generic bookkeeping (metadata lookups for `Optional` of the
/// decoder, its buffer queue, the decoder swapped out and back) and one more pipeline hop,
/// about 6,000 instructions of a warm open's 85,000 (two reads: the caller's open and the
/// app's answer). This reader is concrete and called directly.
///
/// What it keeps of that handler's behaviour, so a peer sees no difference: the bytes read
/// while frames are handed on (a re-entrant read) queue behind the ones being split, in order;
/// after a refused length no more frames come out, and the handler reports later bytes as
/// `ByteToMessageDecoderError.dataReceivedInErrorState`; after the end of input nothing more
/// is split; and read bytes are compacted when that handler's default would (at least 2 KiB
/// read, or more than half of a buffer over 1 KiB), so a long stream of frames does not keep
/// its whole history.
struct FrameReader {
    let maximumLength: Int
    /// The bytes read and not yet split off as frames; nil when there are none, so that the
    /// buffer a read arrived in is not held between reads (NIO reuses it when it is not).
    private var buffered: ByteBuffer?
    /// The length a peer declared that was refused: nothing more is split.
    private(set) var failure: WireError?

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    /// Takes in bytes as they were read, behind those still buffered.
    mutating func append(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0 else { return }
        guard var kept = buffered else {
            buffered = bytes
            return
        }
        // Taken out while written to, so the buffer is uniquely held and grows in place.
        buffered = nil
        kept.writeImmutableBuffer(bytes)
        buffered = kept
    }

    /// The next whole frame's body (a slice of the buffered bytes), or nil until one has
    /// arrived whole. A declared length that is refused throws, and every later call
    /// returns nil.
    mutating func next() throws(WireError) -> ByteBuffer? {
        guard failure == nil, var buffer = buffered else { return nil }
        buffered = nil
        let next: Range<Int>?
        do {
            next = try buffer.withUnsafeReadableBytes { raw throws(WireError) in try Frame.nextBody(raw, limit: maximumLength) }
        } catch {
            failure = error
            buffered = buffer
            throw error
        }
        guard let range = next else {
            if Self.shouldCompact(buffer) { buffer.discardReadBytes() }
            buffered = buffer
            return nil
        }
        buffer.moveReaderIndex(forwardBy: range.lowerBound)
        let body = buffer.readSlice(length: range.count)!
        if buffer.readableBytes > 0 { buffered = buffer }
        return body
    }

    /// Whether the bytes already split off are worth moving the rest over: at least 2 KiB
    /// of them, or more than half of a buffer larger than 1 KiB.
    private static func shouldCompact(_ buffer: ByteBuffer) -> Bool {
        buffer.readerIndex >= 2048 || (buffer.storageCapacity > 1024 && buffer.readerIndex > buffer.storageCapacity / 2)
    }
}
