import CLaunchServicesShim
import CSystemd
import LaunchServicesCore
#if canImport(Glibc)
import Glibc
#endif

/// The session bus thread: owns the sd-bus connection and every call in flight on it. Made,
/// used and freed on its own thread (`startThread`), so nothing here is shared; the loop
/// reaches it only through `SessionBusInbox`.
///
/// One turn: take the queued work and send it (connecting first if there is no connection),
/// let sd-bus do its I/O and dispatch replies (`sd_bus_process`), fail the calls whose
/// deadline passed, then `poll` the eventfd and the bus descriptor until the earliest of the
/// bus's own timeout and the calls' deadlines. Deadlines are the calls' own (sd-bus is given
/// none), so a missed one is told apart from a closed connection by name.
///
/// With a server (`SessionBusServer`, SessionBusWorker+Server.swift) the thread also owns a
/// name and exports an object on the same connection, connects at once rather than on the
/// first call, and connects again after a failure or a loss (1 s, doubling to 30 s).
final class SessionBusWorker {
    /// A call sent and not yet answered. sd-bus's reply callback finds it through its
    /// userdata (unretained: `pending` keeps it alive until its slot is gone).
    final class Pending {
        let id: Int
        let queued: QueuedCall
        var slot: OpaquePointer?
        unowned let worker: SessionBusWorker

        init(id: Int, queued: QueuedCall, worker: SessionBusWorker) {
            self.id = id
            self.queued = queued
            self.worker = worker
        }
    }

    let inbox: SessionBusInbox
    let target: SessionBusAddress
    var bus: OpaquePointer?
    /// Whether the bus accepted this connection (authentication and `Hello` done): a
    /// connection closed before that is "no session bus", after it "disconnected".
    var ready = false
    /// The server side, once the loop asked for it, and what it holds on this connection.
    var server: SessionBusServer?
    var objectSlot: OpaquePointer?
    /// The project's interface at the same path (`LaunchServicesBus.interface`).
    var serviceSlot: OpaquePointer?
    /// Incoming calls taken and not yet answered, each with a reference on its message.
    var incoming: [UInt64: OpaquePointer] = [:]
    var nextIncoming: UInt64 = 0
    /// When to connect again (CLOCK_MONOTONIC ns), and the wait after the next failure.
    var retryAt: UInt64?
    var retryDelay: Duration = .seconds(1)
    private var pending: [Int: Pending] = [:]
    private var nextID = 0

    private init(inbox: SessionBusInbox, target: SessionBusAddress) {
        self.inbox = inbox
        self.target = target
    }

    /// Starts the thread; `nil`, or why it could not start.
    static func startThread(inbox: SessionBusInbox, target: SessionBusAddress) -> String? {
        let body = ThreadBody {
            _ = ls_name_thread("ls-session-bus")
            SessionBusWorker(inbox: inbox, target: target).run()
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(body).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            return "pthread_create: \(String(cString: strerror(rc)))"
        }
        pthread_detach(thread)
        return nil
    }

    private func run() {
        let wakeFD = inbox.wakeFD
        while true {
            let (work, stopping) = inbox.take()
            if stopping {
                for case .call(let queued) in work { finish(queued, .failure(.stopping)) }
                for case .reply(let reply) in work { answer(reply) }
                refuseIncoming()
                closeConnection(failing: .stopping)
                inbox.ended()
                return
            }
            for item in work {
                switch item {
                case .call(let queued): send(queued)
                case .serve(let wanted): serve(wanted)
                case .reply(let reply): answer(reply)
                case .signal(let signal): emit(signal)
                }
            }
            if server != nil, bus == nil, let at = retryAt, Monotonic.now() >= at { reconnect() }
            process()
            expire()
            wait(wakeFD: wakeFD)
        }
    }

    // MARK: Calls

    private func send(_ queued: QueuedCall) {
        guard Monotonic.now() < queued.deadline else { return finish(queued, .failure(noReply(queued))) }
        if bus == nil, let failure = connect() { return finish(queued, .failure(failure)) }
        guard let bus else { return finish(queued, .failure(.disconnected(address: target.address))) }
        let message: OpaquePointer
        switch queued.call.message(on: bus) {
        case .failure(let failure): return finish(queued, .failure(failure))
        case .success(let built): message = built
        }
        defer { sd_bus_message_unref(message) }
        nextID += 1
        let call = Pending(id: nextID, queued: queued, worker: self)
        var slot: OpaquePointer?
        // UINT64_MAX: no sd-bus timeout; the call's own deadline is enforced in `expire`.
        let rc = sd_bus_call_async(bus, &slot, message, Self.replyHandler, Unmanaged.passUnretained(call).toOpaque(), UInt64.max)
        guard rc >= 0 else {
            if sd_bus_is_open(bus) <= 0 {
                closeConnection(failing: closedFailure(errno: -rc))
                return finish(queued, .failure(closedFailure(errno: -rc)))
            }
            return finish(queued, .failure(.invalidCall(reason: "sd-bus could not send it: \(DBusMethodCall.errorText(rc))")))
        }
        call.slot = slot
        pending[call.id] = call
    }

    /// sd-bus calls this from `sd_bus_process`, on this thread: the reply, or a reply it
    /// made up itself because the connection is closing.
    private static let replyHandler: sd_bus_message_handler_t = { message, userdata, _ in
        guard let userdata else { return 0 }
        let call = Unmanaged<Pending>.fromOpaque(userdata).takeUnretainedValue()
        call.worker.replied(call.id, message)
        return 1
    }

    private func replied(_ id: Int, _ message: OpaquePointer?) {
        guard let call = pending.removeValue(forKey: id) else { return }
        call.slot = sd_bus_slot_unref(call.slot)
        guard let bus, sd_bus_is_open(bus) > 0 else { return finish(call.queued, .failure(closedFailure(errno: ECONNRESET))) }
        guard let message else { return finish(call.queued, .failure(.invalidCall(reason: "sd-bus reported a reply without a message"))) }
        if sd_bus_message_is_method_error(message, nil) > 0 {
            let error = sd_bus_message_get_error(message)
            let name = error?.pointee.name.map { String(cString: $0) } ?? "(no error name)"
            let text = error?.pointee.message.map { String(cString: $0) } ?? ""
            return finish(call.queued, .failure(.errorReply(name: name, message: text)))
        }
        let signature = sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
        let entries = signature == "a{sv}" ? DBusReply.unsignedEntries(of: message) : [:]
        finish(call.queued, .success(DBusReply(signature: signature, unsignedEntries: entries)))
    }

    private func expire() {
        guard !pending.isEmpty else { return }
        let now = Monotonic.now()
        for call in pending.values.sorted(by: { $0.id < $1.id }) where call.queued.deadline <= now {
            pending[call.id] = nil
            // Unref'ing the slot cancels the callback: a late reply is dropped by sd-bus.
            call.slot = sd_bus_slot_unref(call.slot)
            finish(call.queued, .failure(noReply(call.queued)))
        }
    }

    private func noReply(_ queued: QueuedCall) -> DBusCallFailure {
        let (seconds, attoseconds) = queued.timeout.components
        return .noReply(destination: queued.call.destination, member: queued.call.member,
                        milliseconds: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    private func finish(_ queued: QueuedCall, _ result: Result<DBusReply, DBusCallFailure>) {
        inbox.answered()
        queued.answer(result)
    }

    // MARK: The connection

    /// Connects to the bus (`nil`), or says why not. The connection is a bus client: it
    /// authenticates and says `Hello` as `process` runs; calls sent meanwhile wait in
    /// sd-bus's queue.
    func connect() -> DBusCallFailure? {
        var made: OpaquePointer?
        var rc = sd_bus_new(&made)
        guard rc >= 0, let made else { return noBus(errno: -rc) }
        rc = sd_bus_set_address(made, target.address)
        if rc >= 0 { rc = sd_bus_set_bus_client(made, 1) }
        if rc >= 0 { rc = sd_bus_set_description(made, "launchservicesd-session-bus") }
        if rc >= 0 { rc = sd_bus_start(made) }
        guard rc >= 0 else {
            sd_bus_close_unref(made)
            return noBus(errno: -rc)
        }
        bus = made
        inbox.connectionChanged(true)
        ready = false
        if server != nil { attachServer() }
        return nil
    }

    func noBus(errno code: Int32, reason: String? = nil) -> DBusCallFailure {
        .noSessionBus(address: target.address, source: target.source, errno: code, reason: reason ?? String(cString: strerror(code)))
    }

    func closedFailure(errno code: Int32) -> DBusCallFailure {
        ready ? .disconnected(address: target.address)
            : noBus(errno: code, reason: "the bus closed the connection before accepting it (\(String(cString: strerror(code))))")
    }

    /// Lets sd-bus write what is queued, read what arrived and dispatch replies; a closed
    /// connection fails its calls and is dropped (the next call connects again).
    private func process() {
        guard let bus else { return }
        // Bounded, so the thread polls its eventfd between bursts; sd_bus_get_timeout
        // is 0 while more is ready, so nothing waits for that.
        for _ in 0..<256 {
            let rc = sd_bus_process(bus, nil)
            guard self.bus != nil else { return }
            if rc < 0 || sd_bus_is_open(bus) <= 0 {
                closeConnection(failing: closedFailure(errno: rc < 0 ? -rc : ECONNRESET))
                return
            }
            if !ready, sd_bus_is_ready(bus) > 0 { ready = true }
            if rc == 0 { return }
        }
    }

    /// Fails every call in flight with `failure` and frees the connection; with a server,
    /// forgets the incoming calls (their callers' connection is gone too), reports the loss
    /// and schedules the next connection (not at the stop).
    func closeConnection(failing failure: DBusCallFailure) {
        detachServer(after: failure)
        for call in pending.values.sorted(by: { $0.id < $1.id }) {
            call.slot = sd_bus_slot_unref(call.slot)
            finish(call.queued, .failure(failure))
        }
        pending.removeAll()
        if let bus { sd_bus_close_unref(bus) }
        bus = nil
        inbox.connectionChanged(false)
        ready = false
    }

    /// Waits for the eventfd, the bus descriptor, the bus's own timeout or the earliest
    /// deadline, whichever comes first.
    private func wait(wakeFD: Int32) {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var wakeAt = UInt64.max
        if let bus {
            let fd = sd_bus_get_fd(bus)
            let events = sd_bus_get_events(bus)
            if fd >= 0, events >= 0 { fds.append(pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0)) }
            var usec: UInt64 = 0
            if sd_bus_get_timeout(bus, &usec) >= 0, usec != UInt64.max {
                wakeAt = usec.multipliedReportingOverflow(by: 1000).overflow ? UInt64.max : usec * 1000
            }
        }
        for call in pending.values { wakeAt = min(wakeAt, call.queued.deadline) }
        if bus == nil, server != nil, let at = retryAt { wakeAt = min(wakeAt, at) }
        var timeout: Int32 = -1
        if wakeAt != UInt64.max {
            let now = Monotonic.now()
            let nanoseconds = wakeAt > now ? wakeAt - now : 0
            timeout = Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
        }
        _ = poll(&fds, nfds_t(fds.count), timeout)
    }
}

/// What the bus thread runs; passed to `pthread_create` retained, released by the thread.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
