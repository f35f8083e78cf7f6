import Dispatch
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The stop's last step: the state databases closed once the writes queued for them are
/// done, each on its own queue. SQLite copies the log into the file and removes it, so a
/// stopped daemon leaves one file per database. The state folder's lock goes with the process.
///
/// Work under way when the daemon stopped may still queue a write: a rescan (or a
/// registration) reads on `files`, then saves from the loop on `files` again; a pasteboard
/// copy with a password is hashed on `worker`, then saved from the loop on `saver`. So each
/// close waits for that first queue, then for the loop, and only then goes on its own queue;
/// nothing new starts once the stop has ended the folder watch and closed the connections.
/// Closed straight away, such a late write failed and was logged as an error at the stop.
///
/// Each database's wait is bounded (`timeout`): a queue still busy then (a scan of a folder
/// that does not answer) is left as it is, that file is not closed, and the next start
/// replays its log.
struct DatabaseClosing {
    let loop: EventLoop
    let logger: Logger
    let timeout: Duration

    /// Closes one database on `queue` once `first` and then the loop have done what they
    /// had, within `timeout`; says by name when it could not.
    func close(_ file: String, after first: WorkQueue, on queue: WorkQueue, _ closing: @escaping @Sendable () throws -> Void) async {
        let deadline = DispatchTime.now() + .nanoseconds(Int(TimeAmount(timeout).nanoseconds))
        var busy = first
        var result: Result<Void, Error>?
        if await Self.run(on: first, until: deadline, {}) != nil {
            _ = try? await loop.submit {}.get()
            busy = queue
            result = await Self.run(on: queue, until: deadline) { Result { try closing() } }
        }
        switch result {
        case .none:
            logger.warning("could not close \(file) within \(timeout) of stopping: \(busy.label) is still busy; stopping without closing it (the next start replays its log)")
        case .failure(let failure)?:
            logger.warning("could not close \(file): \(failure)")
        case .success?:
            break
        }
    }

    /// Runs `work` on `queue` and waits for its result until `deadline`; nil if it has not
    /// finished by then (it still runs, later).
    static func run<T: Sendable>(on queue: WorkQueue, until deadline: DispatchTime, _ work: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (done: CheckedContinuation<T?, Never>) in
            let answered = NIOLockedValueBox(false)
            let answer: @Sendable (T?) -> Void = { result in
                let first = answered.withLockedValue { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { done.resume(returning: result) }
            }
            queue.async { answer(work()) }
            DispatchQueue.global().asyncAfter(deadline: deadline) { answer(nil) }
        }
    }
}
