#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers

/// Descriptors held back for the moments the daemon needs one at its descriptor limit
/// (EMFILE): a few open `/dev/null`s, closed just before a call that must open something and
/// opened again after it. At the limit, `sd_notify` (which opens a socket per message)
/// failed, so the watchdog starved while the daemon served its connections; reading a
/// peer's `/proc` ancestry failed too. With the reserve released around them, they get the
/// descriptors it frees, since the kernel hands out the lowest free numbers.
///
/// Another thread may take a freed descriptor first; then that call fails as it would have,
/// and the reserve fills up again when descriptors free up (every release tries).
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
    /// notifications, peer ancestry): two, as a walk of `/proc` holds two at once.
    static let shared = DescriptorReserve(size: 2)

    /// How many it holds now.
    var count: Int { held.withLockedValue { $0.count } }

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
