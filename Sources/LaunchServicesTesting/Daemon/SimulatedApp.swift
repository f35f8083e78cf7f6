#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesDaemon
import LaunchServicesProtocol
import NIOCore
import NIOEmbedded

/// How a simulated app answers: each phase accepted, vetoed, never answered, or answered by
/// exiting. The defaults are a well-behaved app that implements `open`.
public struct SimulatedBehaviour: Sendable, Equatable {
    public enum Answer: Sendable, Equatable {
        case accept
        /// The delegate method returns false.
        case veto
        /// The app never answers (it hangs in the delegate method) and, like a real app stuck
        /// there, reads nothing more.
        case hang
        /// The process exits with this code instead of answering.
        case exit(Int32)
    }

    public var willFinishLaunching: Answer = .accept
    public var didFinishLaunching: Answer = .accept
    public var open: Answer = .accept
    /// Answers for particular URLs, in place of `open` (an app that hangs on one URL only).
    public var openByURL: [String: Answer] = [:]
    /// How long each open takes before the app answers it. Like the real runtime, the app
    /// handles one frame at a time: frames sent meanwhile wait until it has answered.
    public var openDelay: TimeAmount = .zero
    /// The URL method the app implements; `.none` counts as opened with no method.
    public var method: DeliveryMethod = .open
    /// Whether it says hello on its connection once started.
    public var checksIn = true
    /// Whether it exits when the daemon closes its connection (the real runtime does).
    public var exitsWhenDisconnected = true
    /// Set to make the launch itself fail with this text (a missing executable, say).
    public var launchFailure: String?
    /// Whether its hello says it drops the launch's delivery after a NO, as the runtime does
    /// since 0.4 (the daemon then writes that delivery at the hello); false stands for an app
    /// on an earlier runtime.
    public var dropsVetoedLaunchDelivery = true

    public init() {}
}

/// What a simulated app was told, in order.
public enum SimulatedEvent: Sendable, Equatable {
    case launchMethod(LaunchPhase, url: String)
    case delivered(url: String, sourceApplication: String)
    case notified(AppNotification)
    case signaled(Int32)
}

/// One launched app, in memory: it stands for the process (pid, signals, exit) and speaks
/// the app side of the protocol on an embedded channel, scripted by `SimulatedBehaviour`.
/// Like the `EmbeddedEventLoop` it runs on, it is used from one thread only.
// Unchecked: used only from the thread of the `EmbeddedEventLoop` it runs on (the test's); the compiler cannot see that.
public final class SimulatedApp: LaunchedProcess, @unchecked Sendable {
    public let bundleID: String
    public let pid: Int32
    public var behaviour: SimulatedBehaviour
    public private(set) var events: [SimulatedEvent] = []
    /// Stopped by SIGSTOP: frames wait until SIGCONT.
    public private(set) var isSuspended = false
    /// Stuck in a delegate method (a `.hang` answer): like the real runtime, which handles
    /// one frame at a time, it reads nothing more.
    public private(set) var isHung = false
    /// Busy with a slow open (`openDelay`): it reads nothing more until it has answered.
    public private(set) var isBusy = false
    public private(set) var exitStatus: ExitStatus?
    private let loop: EmbeddedEventLoop
    private var channel: EmbeddedChannel?
    private var onExit: (@Sendable (ExitStatus) -> Void)?
    private var frames = FrameBuffer()
    /// It has said hello. Like the real runtime it reads nothing before: what the daemon
    /// wrote at spawn (the welcome and both launch methods) waits until then.
    private var saidHello = false

    init(bundleID: String, pid: Int32, behaviour: SimulatedBehaviour, loop: EmbeddedEventLoop) {
        self.bundleID = bundleID
        self.pid = pid
        self.behaviour = behaviour
        self.loop = loop
    }

    public var isAlive: Bool { exitStatus == nil }

    /// The frames from the daemon that did not decode, with the decoder's reason (reported
    /// here, never dropped in silence).
    public var undecodableFrames: [String] { frames.failures }

    /// The URLs delivered to it, in order.
    public var deliveredURLs: [String] {
        events.compactMap { if case .delivered(let url, _) = $0 { return url } else { return nil } }
    }

    // MARK: LaunchedProcess

    public func signal(_ sig: Int32) {
        guard isAlive else { return }
        events.append(.signaled(sig))
        switch sig {
        case SIGSTOP: isSuspended = true
        case SIGCONT: isSuspended = false
        case SIGKILL, SIGTERM: exit(.signaled(sig))
        default: break
        }
    }

    public func watchExit(_ onExit: @escaping @Sendable (ExitStatus) -> Void) {
        self.onExit = onExit
    }

    package func connect(on loop: EventLoop, initialize: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Channel> {
        let channel = EmbeddedChannel(loop: self.loop)
        self.channel = channel
        return initialize(channel).flatMap {
            channel.connect(to: try! SocketAddress(unixDomainSocketPath: "/simulated/\(self.bundleID)"))
        }.map {
            // A process says hello some time after it was started, never within the spawn.
            self.loop.execute {
                guard self.behaviour.checksIn else { return }
                self.write(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .app, program: self.bundleID, bundlePath: nil,
                                                  dropsVetoedLaunchDelivery: self.behaviour.dropsVetoedLaunchDelivery)))
                self.saidHello = true
            }
            return channel
        }
    }

    // MARK: Running

    /// The process ends: its connection closes and its exit is reported, as the kernel would.
    public func exit(_ status: ExitStatus) {
        guard isAlive else { return }
        exitStatus = status
        let channel = self.channel
        let onExit = self.onExit
        loop.execute {
            channel?.close(promise: nil)
            onExit?(status)
        }
    }

    /// Reads what the daemon sent and answers it; true if anything was read.
    func step() -> Bool {
        guard isAlive, let channel else { return false }
        if !channel.isActive {
            guard behaviour.exitsWhenDisconnected else { return false }
            exit(.exited(0))
            return true
        }
        guard !isSuspended, saidHello else { return false }
        var progressed = false
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) {
            frames.append(buffer)
            progressed = true
        }
        return handleFrames() || progressed
    }

    /// Answers the frames read, one at a time, until it must wait; true if it handled any.
    private func handleFrames() -> Bool {
        var handled = false
        while isAlive, !isSuspended, !isHung, !isBusy, let envelope = frames.next() {
            answer(envelope)
            handled = true
        }
        return handled
    }

    /// A launch method answered NO (see `answer`).
    private var launchVetoed = false

    private func answer(_ envelope: Envelope) {
        switch envelope.message {
        case .launchMethod(let phase, let delivery):
            events.append(.launchMethod(phase, url: delivery.url))
            let answer = phase == .willFinishLaunching ? behaviour.willFinishLaunching : behaviour.didFinishLaunching
            if answer == .veto { launchVetoed = true }
            respond(answer, id: envelope.id, method: nil)
        case .deliver(let delivery):
            // As the runtime does: the launch's delivery, written at the hello, is dropped
            // after a NO from a launch method.
            if delivery.ofLaunch && launchVetoed { return }
            events.append(.delivered(url: delivery.url, sourceApplication: delivery.sourceApplication))
            let answer = behaviour.openByURL[delivery.url] ?? behaviour.open
            guard behaviour.openDelay > .zero else {
                respond(answer, id: envelope.id, method: behaviour.method)
                return
            }
            isBusy = true
            let method = behaviour.method
            loop.scheduleTask(in: behaviour.openDelay) { [self] in
                isBusy = false
                guard isAlive else { return }
                respond(answer, id: envelope.id, method: method)
                _ = handleFrames()
            }
        case .notify(let notification):
            events.append(.notified(notification))
        default:
            break
        }
    }

    private func respond(_ answer: SimulatedBehaviour.Answer, id: UInt32, method: DeliveryMethod?) {
        switch answer {
        case .accept: write(Envelope(id: id, .phaseResult(accepted: true, method: method)))
        case .veto: write(Envelope(id: id, .phaseResult(accepted: false, method: method)))
        case .hang: isHung = true
        case .exit(let code): exit(.exited(code))
        }
    }

    private func write(_ envelope: Envelope) {
        guard let channel, channel.isActive else { return }
        _ = try? channel.writeInbound(channel.allocator.buffer(bytes: Frame.encode(envelope)))
    }
}
