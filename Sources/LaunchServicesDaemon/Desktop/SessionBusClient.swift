import CLaunchServicesShim
import LaunchServicesCore
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How the session bus connection is used. Every wait is bounded by a call's own deadline.
package struct SessionBusSettings: Sendable, Equatable {
    /// Calls sent or waiting to be sent, at most; one past it is answered `tooManyCalls` at
    /// once, rather than growing a queue behind a bus that does not answer.
    package var maximumCalls = 64

    package init() {}
}

/// The daemon's one connection to the user's session bus, through sd-bus, for method calls
/// (D-Bus activation today). Calls are made on the event loop and answered on it, exactly
/// once each: the reply, the callee's error, the call's deadline, the bus going away, a full
/// queue or the stop, each by name (`DBusCallFailure`).
///
/// sd-bus is not thread-safe and blocks, so the connection lives on a thread of its own
/// (`SessionBusWorker`), started with the first call; the loop hands it work through a
/// bounded queue and an eventfd, and never waits for it. The thread connects on the first
/// call (no bus at all: that call fails, saying which address was tried and where it came
/// from), keeps the connection, and when the bus goes away fails the calls waiting on it and
/// connects again on the next call.
///
/// The same thread and connection carry the daemon's server side (`serve`): a bus name owned,
/// `org.freedesktop.Application` exported, incoming calls handed to the loop and their
/// replies queued back (`reply`).
package final class SessionBusClient: Sendable {
    private let inbox: SessionBusInbox
    private let target: Result<SessionBusAddress, DBusCallFailure>
    private let settings: SessionBusSettings

    /// `environment` says where the bus is (`SessionBusAddress`); it is read once, here.
    package init(environment: [String: String], settings: SessionBusSettings = SessionBusSettings()) {
        self.target = SessionBusAddress.resolve(environment: environment)
        self.settings = settings
        self.inbox = SessionBusInbox()
    }

    /// The address calls go to, or why there is none.
    package var address: Result<SessionBusAddress, DBusCallFailure> { target }

    /// Sends `call`; `completion` runs once, on `loop` (the caller's loop), with the reply or
    /// the failure. No reply within `deadline` (counted from now, queueing included) is
    /// `noReply`. Call it on `loop`.
    package func call(_ call: DBusMethodCall, deadline: Duration, on loop: EventLoop,
                      completion: @escaping (Result<DBusReply, DBusCallFailure>) -> Void) {
        loop.assertInEventLoop()
        let bound = NIOLoopBound(completion, eventLoop: loop)
        let answerNow = { (failure: DBusCallFailure) in
            loop.execute { bound.value(.failure(failure)) }
        }
        let target: SessionBusAddress
        switch self.target {
        case .failure(let failure): return answerNow(failure)
        case .success(let address): target = address
        }
        let now = Monotonic.now()
        let (sum, overflow) = now.addingReportingOverflow(Monotonic.nanoseconds(deadline))
        let queued = QueuedCall(call: call, deadline: overflow ? UInt64.max : sum, timeout: deadline, completion: bound)
        let admission = inbox.admit(.call(queued), limit: settings.maximumCalls) {
            SessionBusWorker.startThread(inbox: $0, target: target)
        }
        switch admission {
        case .queued: break
        case .refused(let failure): answerNow(failure)
        }
    }

    /// Owns `server.name` and exports its object: starts the thread now, which connects at
    /// once and again whenever the connection is lost (`SessionBusServer`). With no address
    /// at all, reports `unreachable` once and starts nothing.
    package func serve(_ server: SessionBusServer) {
        guard case .success(let target) = target else {
            if case .failure(let failure) = target { server.report(.unreachable(failure, retry: .zero)) }
            return
        }
        if let problem = inbox.post(.serve(server), start: { SessionBusWorker.startThread(inbox: $0, target: target) }) {
            server.report(.unreachable(.invalidCall(reason: problem), retry: .zero))
        }
    }

    /// Answers an incoming call (`SessionBusEvent.call`); a call the thread no longer holds
    /// (its connection ended) is dropped there.
    package func reply(_ reply: IncomingBusReply) {
        _ = inbox.post(.reply(reply), start: nil)
    }

    /// Sends `AppStateChanged` from the exported object, when connected; without a
    /// connection it is dropped (a signal is for whoever listens now). `false` when the
    /// thread already holds `SessionBusInbox.maximumSignals` unsent: that one is dropped
    /// rather than queued without bound behind a bus that does not read.
    @discardableResult
    package func signal(_ signal: AppStateSignal) -> Bool {
        inbox.postSignal(signal)
    }

    /// Whether the bus thread holds a connection to the bus now (made, accepted by the bus
    /// or not yet): only then can a signal posted now be sent, since the thread drops the
    /// signals it takes while it has none (`emit`) and takes each on its next turn, before
    /// it connects again. One atomic load, cheap enough to ask on every lifecycle event.
    package var hasConnection: Bool { inbox.hasConnection }

    /// Answers every call still owed one (`stopping`), closes the connection and ends the
    /// thread; later calls are answered `stopping`. The future completes on `loop` when the
    /// thread has ended (at once when it never started).
    package func shutdown(on loop: EventLoop) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        inbox.stop(promise)
        return promise.futureResult
    }
}

/// What the loop hands the bus thread, carried out on its one connection, in order.
enum SessionBusWork: Sendable {
    case call(QueuedCall)
    /// Own a name and export the object, now and after every reconnection.
    case serve(SessionBusServer)
    /// Answer an incoming call.
    case reply(IncomingBusReply)
    /// Send `AppStateChanged`.
    case signal(AppStateSignal)
}

/// `AppStateChanged(s id, s state, u pid)`: an app's lifecycle state, never a URL.
package struct AppStateSignal: Sendable, Equatable {
    package var app: String
    package var state: String
    /// 0 when the app has no process.
    package var pid: UInt32
}

/// A call waiting for the bus thread, with what answers it.
struct QueuedCall: Sendable {
    let call: DBusMethodCall
    /// CLOCK_MONOTONIC nanoseconds.
    let deadline: UInt64
    let timeout: Duration
    let completion: NIOLoopBound<(Result<DBusReply, DBusCallFailure>) -> Void>

    /// Hands `result` to the caller's loop; the only way a call is answered.
    func answer(_ result: Result<DBusReply, DBusCallFailure>) {
        let completion = completion
        completion.eventLoop.execute { completion.value(result) }
    }
}

/// Where the loop leaves work for the bus thread, and how it wakes it: a queue under a lock,
/// an eventfd, and the count of calls not yet answered (the bound). Every write to the
/// eventfd happens under the lock, and the thread closes it only after it saw `stopping`
/// under the same lock, so a write never reaches a closed (or reused) descriptor.
final class SessionBusInbox: Sendable {
    struct State {
        var work: [SessionBusWork] = []
        /// Calls admitted and not yet answered.
        var calls = 0
        var wakeFD: Int32 = -1
        var started = false
        var stopping = false
        var stopped: [EventLoopPromise<Void>] = []
        var ended = false
        /// Signals queued and not yet taken by the thread.
        var signals = 0
    }

    /// Signals the thread may hold unsent, at most.
    static let maximumSignals = 1024

    enum Admission {
        case queued
        case refused(DBusCallFailure)
    }

    private let state = Mutex(State())
    /// Set by the thread while it holds a connection (`SessionBusWorker.bus` is not nil);
    /// read by the loop, lock-free (`hasConnection`).
    private let connected = Atomic<Bool>(false)

    /// Whether the thread holds a connection now.
    var hasConnection: Bool { connected.load(ordering: .acquiring) }

    /// For the thread: it made a connection (`true`) or dropped it (`false`).
    func connectionChanged(_ made: Bool) { connected.store(made, ordering: .releasing) }

    /// Queues `work` unless the bound is reached or the thread stops; starts the thread
    /// (through `start`, with the lock held) the first time.
    func admit(_ work: SessionBusWork, limit: Int, start: (SessionBusInbox) -> String?) -> Admission {
        state.withLock { state in
            guard !state.stopping else { return .refused(.stopping) }
            guard state.calls < limit else { return .refused(.tooManyCalls(limit: limit)) }
            if let problem = Self.startIfNeeded(&state, self, start) { return .refused(.invalidCall(reason: problem)) }
            state.calls += 1
            state.work.append(work)
            Self.wake(state.wakeFD)
            return .queued
        }
    }

    /// Queues work that is not a call and so not counted against the calls' bound (a
    /// reply: bounded by the incoming calls the thread holds; the server, once). Starts the
    /// thread if `start` is given; without it, work for a thread that never started or has
    /// stopped is dropped. `nil`, or why the thread could not start.
    func post(_ work: SessionBusWork, start: ((SessionBusInbox) -> String?)?) -> String? {
        state.withLock { state in
            guard !state.stopping else { return nil }
            if let start {
                if let problem = Self.startIfNeeded(&state, self, start) { return problem }
            } else if !state.started {
                return nil
            }
            state.work.append(work)
            Self.wake(state.wakeFD)
            return nil
        }
    }

    private static func startIfNeeded(_ state: inout State, _ inbox: SessionBusInbox, _ start: (SessionBusInbox) -> String?) -> String? {
        guard !state.started else { return nil }
        let fd = ls_wake_fd()
        guard fd >= 0 else { return "the session bus thread cannot be woken: eventfd failed: \(String(cString: strerror(errno)))" }
        state.wakeFD = fd
        if let problem = start(inbox) {
            close(fd)
            state.wakeFD = -1
            return "the session bus thread cannot start: \(problem)"
        }
        state.started = true
        return nil
    }

    func stop(_ promise: EventLoopPromise<Void>) {
        let now = state.withLock { state -> Bool in
            state.stopping = true
            guard state.started, !state.ended else { return true }
            state.stopped.append(promise)
            Self.wake(state.wakeFD)
            return false
        }
        if now { promise.succeed(()) }
    }

    /// Queues a signal for a thread that is running, within `maximumSignals`.
    func postSignal(_ signal: AppStateSignal) -> Bool {
        state.withLock { state in
            // No thread yet, or stopping: no connection to send on, so nothing is lost by the bound.
            guard state.started, !state.stopping else { return true }
            guard state.signals < Self.maximumSignals else { return false }
            state.signals += 1
            state.work.append(.signal(signal))
            Self.wake(state.wakeFD)
            return true
        }
    }

    /// For the thread: the eventfd to poll.
    var wakeFD: Int32 { state.withLock { $0.wakeFD } }

    /// For the thread: the work queued since the last take, and whether to stop.
    func take() -> (work: [SessionBusWork], stopping: Bool) {
        state.withLock { state in
            var drained: UInt64 = 0
            _ = read(state.wakeFD, &drained, 8)
            let work = state.work
            state.work.removeAll()
            state.signals = 0
            return (work, state.stopping)
        }
    }

    /// For the thread: one call was answered.
    func answered() {
        state.withLock { $0.calls -= 1 }
    }

    /// For the thread, last: closes the eventfd and completes the stops.
    func ended() {
        let promises = state.withLock { state -> [EventLoopPromise<Void>] in
            state.ended = true
            close(state.wakeFD)
            state.wakeFD = -1
            defer { state.stopped.removeAll() }
            return state.stopped
        }
        for promise in promises { promise.succeed(()) }
    }

    private static func wake(_ fd: Int32) {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }
}

/// CLOCK_MONOTONIC, the clock sd-bus's timeouts use, in nanoseconds.
enum Monotonic {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// A duration in nanoseconds: 0 for a negative one, saturated for one beyond ~584 years.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return UInt64.max }
        let (sum, carried) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return carried ? UInt64.max : sum
    }
}
