import LaunchServicesCore
import NIOCore
import NIOPosix

/// Reads the copy of a desktop app's stderr (the forwarder's fd 3) on the event loop while
/// the launch waits for its outcome, keeping only a bounded tail (`StderrTail`); the end of
/// the pipe (every writer gone: the forwarder exited) is reported once. Closing the channel
/// when the outcome is known costs the forwarder that copy only.
final class StderrTailHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let received: (ByteBuffer) -> Void
    private let ended: () -> Void
    private var reportedEnd = false

    init(received: @escaping (ByteBuffer) -> Void, ended: @escaping () -> Void) {
        self.received = received
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func end() {
        guard !reportedEnd else { return }
        reportedEnd = true
        ended()
    }
}

enum StderrTailReader {
    /// A pipe channel on `loop` that owns `fd` from now on (closed with the channel, or here
    /// if the channel cannot be made, which then counts as the end).
    static func open(fd: Int32, on loop: EventLoop, received: @escaping @Sendable (ByteBuffer) -> Void, ended: @escaping @Sendable () -> Void) -> EventLoopFuture<Channel> {
        NIOPipeBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StderrTailHandler(received: received, ended: ended))
                }
            }
            .takingOwnershipOfDescriptor(input: fd)
    }
}
