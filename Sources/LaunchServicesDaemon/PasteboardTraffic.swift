import Dispatch
import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore

/// The order pasteboard requests are answered in, now that some wait for a password hash.
/// Used only on the daemon's loop; `LaunchServicesDaemon+Pasteboard` drives it.
///
/// - Each connection is a **lane**: its requests are applied in the order they came, one at
///   a time, so a copy with a password followed at once by a paste sees the copy. A lane
///   holds at most `maximumOperationsPerConnection` requests, and waiting items of at most
///   `maximumBytes` (one pasteboard's worth).
/// - A pasteboard with a password check in progress, or cooling down after a wrong password,
///   is **held**: requests for it wait (at most `maximumWaitingPerPasteboard` lanes), while
///   requests for other pasteboards go on. Per pasteboard rather than one queue for all, so a
///   guesser hammering one pasteboard does not slow the others.
/// - Checks and hashes run on **one thread**, at most `maximumPasswordChecksWaiting` queued.
/// - A request that needs no password work, from a connection with nothing waiting, for a
///   pasteboard not held, is applied at once on the loop, as before: no thread hop.
///
/// Not `Sendable`: what crosses to `worker` or `saver` and back travels in `NIOLoopBound`.
final class PasteboardTraffic {
    /// One pasteboard request, as received.
    struct Operation {
        let id: UInt32
        let request: PasteboardRequest
        var board: String { request.name ?? Pasteboards.general }
        var byteCount: Int { request.items.reduce(0) { $0 + $1.data.count + $1.type.utf8.count } }
    }

    /// One connection's requests not answered yet.
    final class Lane {
        let connection: ClientConnection
        var queued: [Operation] = []
        /// The first request is under way: its password work, or the delay after a wrong
        /// password, which holds the connection's later requests too.
        var busy = false
        init(connection: ClientConnection) { self.connection = connection }
        var count: Int { queued.count + (busy ? 1 : 0) }
        var queuedBytes: Int { queued.reduce(0) { $0 + $1.byteCount } }
    }

    /// How long a wrong password's answer waits, and how long its connection and its
    /// pasteboard take no further attempt. A fixed cost, not a growing one: growth would let a
    /// guesser lock the owner out for as long as it liked.
    static let failureDelay: TimeAmount = .seconds(1)
    /// Lanes that may wait for one held pasteboard; past it, `unavailable` at once. Small, so
    /// the owner's request either waits a few seconds or is told to retry, never both at length.
    static let maximumWaitingPerPasteboard = 4

    let hasher: any PasswordHasher
    /// The one hashing thread: each hash holds 19 MiB for tens of ms, so one at a time bounds
    /// both the memory and the daemon-wide guessing rate.
    let worker: WorkQueue
    /// Where kept pasteboards are written, in order, off the loop (not behind password work).
    let saver: WorkQueue

    var lanes: [ObjectIdentifier: Lane] = [:]
    /// Pasteboards with a password check running or cooling down.
    var held: Set<String> = []
    /// Lanes whose first request waits for a held pasteboard, in arrival order.
    var waiting: [String: [Lane]] = [:]
    /// Password hashes and checks handed to `worker` and not finished.
    var checksInProgress = 0

    init(workers: DaemonWorkers) {
        self.hasher = workers.hasher
        self.worker = workers.passwords
        self.saver = workers.pasteboardSaves
    }

    func lane(for connection: ClientConnection) -> Lane {
        let key = ObjectIdentifier(connection)
        if let lane = lanes[key] { return lane }
        let lane = Lane(connection: connection)
        lanes[key] = lane
        return lane
    }

    /// Forgets a lane with nothing left, so an idle connection costs nothing.
    func retireIfIdle(_ lane: Lane) {
        guard lane.queued.isEmpty, !lane.busy else { return }
        let key = ObjectIdentifier(lane.connection)
        if lanes[key] === lane { lanes[key] = nil }
    }

    /// The first lane waiting for `board`, taken off its list.
    func nextWaiting(for board: String) -> Lane? {
        guard var queue = waiting[board], !queue.isEmpty else { return nil }
        let next = queue.removeFirst()
        waiting[board] = queue.isEmpty ? nil : queue
        return next
    }
}
