#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers

/// Descriptors held back for the moments the daemon needs one at its descriptor limit
/// (EMFILE): open `/dev/null`s, closed just before a call that must open something and
/// opened again after it. At the limit, `sd_notify` (which opens a socket per message)
/// failed, so the watchdog starved while the daemon served its connections; reading a
/// peer's `/proc` ancestry failed too. With the reserve released around them, they get the
/// descriptors it frees, since the kernel hands out the lowest free numbers.
///
/// Released only when a call has failed for want of a descriptor (`retryingAtLimit`):
/// released around every call, the freed numbers went to whichever thread opened a file in
/// that moment (the registry's file queue, the app logs, the pasteboard saver), even far from
/// the limit, and the reserve could not be refilled. Another thread may still take a freed
/// descriptor first at the limit; then that call fails as it would have, and the reserve is
/// topped up as soon as a descriptor is free (every call through it tries).
final class DescriptorReserve: Sendable {
    private let held: NIOLockedValueBox<[Int32]>
    /// How many it holds when nothing is missing.
    let size: Int

    init(size: Int) {
        self.size = size
        held = NIOLockedValueBox([])
        refill()
    }

    deinit {
        held.withLockedValue { $0.forEach { close($0) } }
    }

    /// For the calls on the daemon's loop that must open a descriptor (the service manager's
    /// notifications, peer ancestry): each holds one at a time (`sd_notify` its socket, the
    /// walk of `/proc` one `stat` file, closed before the next is opened), and the loop makes
    /// one such call at a time.
    static let shared = DescriptorReserve(size: 1)

    /// How many it holds now.
    var count: Int { held.withLockedValue { $0.count } }

    /// Runs `body`, and only if its result says it found no descriptor (`outOfDescriptors`)
    /// runs it again with the reserve released. A reserve left short (another thread took
    /// a released descriptor) is topped up after every call.
    func retryingAtLimit<Result>(_ body: () -> Result, outOfDescriptors: (Result) -> Bool) -> Result {
        let first = body()
        guard outOfDescriptors(first) else {
            if count < size { refill() }
            return first
        }
        return withReleased(body)
    }

    /// Runs `body` with the reserve's descriptors free for it, then takes them back.
    func withReleased<Result>(_ body: () throws -> Result) rethrows -> Result {
        let released = held.withLockedValue { descriptors in
            defer { descriptors.removeAll() }
            return descriptors
        }
        released.forEach { close($0) }
        defer { refill() }
        return try body()
    }

    /// Gives up one descriptor for a use that outlasts a call (a connection accepted only to
    /// be refused at the limit); false if none is held. `refill` takes it back later.
    func releaseOne() -> Bool {
        guard let descriptor = held.withLockedValue({ $0.popLast() }) else { return false }
        close(descriptor)
        return true
    }

    /// Opens what is missing; quietly fewer while no descriptor is free.
    func refill() {
        held.withLockedValue { descriptors in
            while descriptors.count < size {
                let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { return }
                descriptors.append(descriptor)
            }
        }
    }
}
