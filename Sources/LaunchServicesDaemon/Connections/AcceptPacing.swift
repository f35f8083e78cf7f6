#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import NIOCore

/// Accepting at the descriptor limit (EMFILE), on the listening socket's pipeline.
///
/// NIO's `AcceptBackoffHandler` does not stop the spin on Linux: after a failed `accept`
/// the listening socket stays registered for reading (its read stays pending), so epoll
/// reports it ready at once, again and again — measured, 27,000 failed `accept4` a second
/// and a full core, for as long as the limit lasts. Here a failure that more descriptors
/// would cure turns `autoRead` off, which takes the socket out of epoll, and on again after
/// `pause`: one attempt per pause, and the open connections are served meanwhile.
///
/// Callers that arrive at the limit are not all left in the backlog until their own
/// timeout: one descriptor is held in reserve, released on a failure, and the connection
/// accepted with it is refused at once with `unavailable` naming `LimitNOFILE`; the
/// reserve is taken back when that connection closes (at most its 250 ms linger), and
/// released again at the first failure after the next pause. So about one caller per
/// pause is refused by name; the others wait in the backlog. Loop-confined, like the channel.
final class AcceptPacing: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Channel
    typealias InboundOut = Channel

    private let pause: TimeAmount
    private let reserve: DescriptorReserve
    private let failed: (Error) -> Void
    /// The reserve was released: the next accepted connection took its descriptor.
    private var refuseNext = false
    private var resumption: Scheduled<Void>?

    /// What a caller accepted on the reserve reads.
    static let refusal = OpenError(.unavailable, "launchservicesd is out of file descriptors (LimitNOFILE): it serves the connections it has and accepts new ones when some close; retry in a moment, or raise LimitNOFILE in its systemd unit")

    init(pause: TimeAmount, reserve: DescriptorReserve, failed: @escaping (Error) -> Void) {
        self.pause = pause
        self.reserve = reserve
        self.failed = failed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refuseNext {
            refuseNext = false
            // Taking the reserve back succeeds if descriptors freed up meanwhile: then this
            // caller is served like any other. Otherwise it holds the reserve's descriptor.
            reserve.refill()
            if reserve.count < reserve.size {
                let child = unwrapInboundIn(data)
                // First in its pipeline: the daemon never sees it, the caller reads why.
                try? child.pipeline.syncOperations.addHandler(RefusedAtDescriptorLimit(), position: .first)
                let reserve = reserve
                child.closeFuture.whenComplete { _ in reserve.refill() }
            }
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let io = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        // ECONNABORTED and the like concern one caller who left; the next accept is fine.
        guard [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(io.errnoCode) else { return }
        failed(error)
        if io.errnoCode == EMFILE || io.errnoCode == ENFILE, !refuseNext, reserve.releaseOne() {
            refuseNext = true
            return
        }
        // The released descriptor went elsewhere (another thread took it): pause, and take
        // the reserve back when resuming.
        refuseNext = false
        pauseAccepting(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
    }

    private func pauseAccepting(_ context: ChannelHandlerContext) {
        guard resumption == nil, let options = context.channel.syncOptions else { return }
        // Synchronous on the loop: the socket leaves epoll before `readable` returns.
        try? options.setOption(.autoRead, value: false)
        resumption = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
            resumption = nil
            reserve.refill()
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }
}

/// The pipeline of a connection accepted on the reserve descriptor: it says why it is
/// refused and ends (the caller reads the reason instead of a reset), passing nothing on.
final class RefusedAtDescriptorLimit: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func channelActive(context: ChannelHandlerContext) {
        ConnectionTable.refuse(context.channel, with: AcceptPacing.refusal, linger: .milliseconds(250))
    }

    /// What the caller sends meanwhile is discarded.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
