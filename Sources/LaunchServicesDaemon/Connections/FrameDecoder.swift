import LaunchServicesProtocol
import NIOCore

/// Splits the byte stream into frame bodies (`u32` big-endian length, then the body), inside
/// NIO's `ByteToMessageHandler`. A declared length over the limit is refused at once, before
/// any of it is buffered. Used where a frame is rare: a D-Bus caller's end of its socketpair
/// (`DBusCaller`), which reads only the daemon's refusals. The daemon's own end of every
/// connection splits with `FrameReader` inside `ConnectionHandler` (why: see there).
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    let maximumLength: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let next = try buffer.withUnsafeReadableBytes { raw throws(WireError) in
            try Frame.nextBody(raw, limit: maximumLength)
        }
        guard let range = next else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: range.lowerBound)
        let body = buffer.readSlice(length: range.count)!
        context.fireChannelRead(wrapInboundOut(body))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
