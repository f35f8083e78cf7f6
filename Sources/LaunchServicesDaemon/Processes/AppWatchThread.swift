import CLaunchServicesShim
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Something the app watch thread listens to: a launched app's pidfd (its exit) or its
/// output pipe (its log). Called only on that thread.
protocol AppWatched: AnyObject, Sendable {
    /// The descriptor is readable (or at end of file, or in error). What next: keep
    /// listening, listen again only after a rest, or stop (the thread then forgets the
    /// registration and calls `removed`).
    func readable(on thread: AppWatchThread) -> AppWatchNext
    /// The registration is gone from the thread's epoll: the descriptor may be closed now.
    func removed()
}

enum AppWatchNext {
    case keep
    /// Disarmed until this much later (CLOCK_MONOTONIC nanoseconds from now). A hang-up or
    /// an error still wakes it (epoll reports those whatever it was asked for): a pipe whose
    /// writers are all gone is drained to its end at once.
    case rest(nanoseconds: UInt64)
    case stop
}

/// One thread and one epoll for every app the daemon launched: their exits (pidfds) and
/// their output pipes (log files).
///
/// Why not Dispatch sources, as before: on Linux a source's registration, and each of its
/// events, passes through Dispatch's manager thread, which then wakes a worker thread for
/// the handler: two or three thread wake-ups per event, plus one at every spawn to register
/// two sources. On the project's virtual machine, where waking a thread on an idle CPU exits
/// to the host, Dispatch's threads took about 110 µs of CPU per cold open (this thread about
/// 30, measured side by side). Here a registration is an `epoll_ctl` from the calling thread
/// (no wake-up), and
/// an event wakes this one thread, which runs the handler itself. A drain's rest is a
/// disarmed registration and a timeout of this thread's `epoll_wait`, not a timer of its own.
///
/// The thread lives as long as the process (in tests, one serves every daemon the process
/// runs, as Dispatch's queues did). Handlers run one at a time, in event order; an exit's
/// handler drains its app's pipe before it reports the exit, so every line an app printed is
/// in its log before the daemon hears that it ended.
final class AppWatchThread: Sendable {
    static let shared = AppWatchThread()

    private let epollFD: Int32
    /// Registrations by token. Written by `add` (any thread) and by this thread when one
    /// stops; the lock is held only for the dictionary operation, and by `hear` across its
    /// `epoll_ctl`.
    private let registrations = Mutex<[UInt64: Registration]>([:])
    private let nextToken = Atomic<UInt64>(1)
    /// Rests in progress, by token: when each ends. Touched only on this thread; the lock,
    /// never contended, lets the compiler check that.
    private let resting = Mutex<[UInt64: UInt64]>([:])

    struct Registration: Sendable {
        let fd: Int32
        let watched: any AppWatched
    }

    private init() {
        epollFD = ls_epoll_create()
        if epollFD < 0 {
            // Without an epoll nothing can be watched: the daemon would lose every app's exit.
            fatalError("launchservicesd: epoll_create1 for the app watch thread failed: \(String(cString: strerror(errno)))")
        }
        // Named for ps and the kernel (Foundation's `Thread.name` is not the kernel's name
        // here: the thread would show as whichever thread made it).
        Thread { [self] in
            _ = ls_name_thread("ls-app-watch")
            run()
        }.start()
    }

    /// Starts listening to `fd` for `watched`; `heard` false: registered, but its data is
    /// not heard until `hear` (a hang-up or an error still is). False (errno set) when the
    /// kernel refuses the registration; the caller then still owns the descriptor.
    func add(_ fd: Int32, _ watched: any AppWatched, heard: Bool = true) -> Bool {
        let token = nextToken.add(1, ordering: .relaxed).oldValue
        // In the table before the kernel can report it.
        registrations.withLock { $0[token] = Registration(fd: fd, watched: watched) }
        guard ls_epoll_add(epollFD, fd, token, heard ? 1 : 0) == 0 else {
            let code = errno
            registrations.withLock { _ = $0.removeValue(forKey: token) }
            errno = code
            return false
        }
        return true
    }

    /// Starts hearing the data of `watched`'s descriptor, registered with `heard` false (any
    /// thread; no thread is woken unless data is waiting). Nothing when it is gone. The
    /// table's lock is held across the `epoll_ctl`: a registration is taken out of the table
    /// before its descriptor is closed, so the call never reaches a descriptor number
    /// closed and reused meanwhile.
    func hear(_ watched: any AppWatched) {
        registrations.withLock { table in
            guard let (token, registration) = table.first(where: { $0.value.watched === watched }) else { return }
            _ = ls_epoll_arm(epollFD, registration.fd, token, 1)
        }
    }

    /// Whether `watched` is still registered (not yet stopped and forgotten): for tests.
    func isRegistered(_ watched: any AppWatched) -> Bool {
        registrations.withLock { table in table.values.contains { $0.watched === watched } }
    }

    /// Whether `process`'s exit is still watched: for tests.
    func isWatchingExit(of process: AppProcess) -> Bool {
        registrations.withLock { table in table.values.contains { ($0.watched as? ExitWatch)?.process === process } }
    }

    /// Stops listening for `watched`, on this thread (an exit's handler finishing its app's
    /// drain); nothing when it was stopped already. Calls `removed`.
    func stop(_ watched: any AppWatched) {
        let found = registrations.withLock { table in table.first { $0.value.watched === watched } }
        guard let (token, registration) = found else { return }
        forget(token, registration)
    }

    private func forget(_ token: UInt64, _ registration: Registration) {
        _ = ls_epoll_remove(epollFD, registration.fd)
        registrations.withLock { _ = $0.removeValue(forKey: token) }
        resting.withLock { _ = $0.removeValue(forKey: token) }
        registration.watched.removed()
    }

    private func run() -> Never {
        var tokens = [UInt64](repeating: 0, count: 64)
        while true {
            let now = Self.monotonicNanoseconds()
            wakeRested(now: now)
            let timeout = Self.timeout(until: resting.withLock { $0.values.min() }, now: now)
            let count = tokens.withUnsafeMutableBufferPointer { ls_epoll_wait_tokens(epollFD, $0.baseAddress, Int32($0.count), timeout) }
            guard count > 0 else { continue }
            for token in tokens[0..<Int(count)] {
                guard let registration = registrations.withLock({ $0[token] }) else { continue }
                switch registration.watched.readable(on: self) {
                case .keep:
                    break
                case .rest(let nanoseconds):
                    // (A resting registration woken by a hang-up may ask to rest again: one end.)
                    if ls_epoll_arm(epollFD, registration.fd, token, 0) == 0 {
                        let until = Self.monotonicNanoseconds() + nanoseconds
                        resting.withLock { $0[token] = until }
                    }
                case .stop:
                    forget(token, registration)
                }
            }
        }
    }

    /// Arms again every registration whose rest is over.
    private func wakeRested(now: UInt64) {
        let over = resting.withLock { rests -> [UInt64] in
            let over = rests.filter { $0.value <= now }.map(\.key)
            for token in over { rests.removeValue(forKey: token) }
            return over
        }
        for token in over {
            if let registration = registrations.withLock({ $0[token] }) {
                _ = ls_epoll_arm(epollFD, registration.fd, token, 1)
            }
        }
    }

    /// `epoll_wait`'s timeout in milliseconds: until the first rest ends (rounded up, at
    /// most a second), or none.
    private static func timeout(until first: UInt64?, now: UInt64) -> Int32 {
        guard let first else { return -1 }
        let left: UInt64 = first > now ? first - now : 0
        let milliseconds: UInt64 = left / 1_000_000 + 1
        return Int32(min(milliseconds, 1_000))
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
