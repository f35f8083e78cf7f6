import Dispatch
import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The pasteboards' part of the daemon. `PasteboardScheduler` (Core) owns the pasteboards and
/// decides when each request is applied and answered; this carries its actions out and
/// feeds back what came of them: password work on the one hashing thread, the wrong-password
/// delay as a timer on the loop, saves through `PasteboardStore` on the store's queue,
/// answers through the `ConnectionTable`. It decides nothing itself.
///
/// Used only on the daemon's loop, so not `Sendable`: what crosses to `worker` or `saver`
/// and back travels in `NIOLoopBound`.
final class PasteboardService {
    typealias Peer = PasteboardScheduler.Peer

    private let loop: EventLoop
    private let logger: Logger
    private let connections: ConnectionTable
    private(set) var scheduler: PasteboardScheduler
    /// Where kept pasteboards are written; `nil` until the state folder is loaded, or when it
    /// has none or `pasteboard.sqlite` could not be opened.
    private(set) var store: PasteboardStore?
    private let hasher: any PasswordHasher
    /// Wall-clock seconds since the Unix epoch: expiry holds across restarts.
    private let clock: () -> UInt64
    /// The one hashing thread: each hash holds 19 MiB for tens of ms, so one at a time bounds
    /// both the memory and the daemon-wide guessing rate (`DaemonWorkers.passwords`).
    let worker: WorkQueue
    /// Where kept pasteboards are written, in order, off the loop (not behind password work;
    /// `DaemonWorkers.pasteboardSaves`).
    let saver: WorkQueue
    /// The connections whose requests are waiting or under way, for the answers that come later.
    private var peers: [Peer: ClientConnection] = [:]

    /// `keepsState`: the daemon has a state folder, so kept pasteboards must be saved; until
    /// `adopt` brings the store, a copy that should be kept is refused. `worker` and `saver`
    /// are threads in the daemon and the loop itself in the testing kit (`DaemonWorkers`).
    init(limits: PasteboardLimits, keepsState: Bool, loop: EventLoop, logger: Logger, connections: ConnectionTable,
         worker: WorkQueue, saver: WorkQueue,
         hasher: any PasswordHasher = Argon2idHasher(), clock: @escaping () -> UInt64 = { UInt64(max(0, time(nil))) }) {
        self.loop = loop
        self.worker = worker
        self.saver = saver
        self.logger = logger
        self.connections = connections
        self.hasher = hasher
        self.clock = clock
        scheduler = PasteboardScheduler(pasteboards: Pasteboards(limits: limits), storage: keepsState ? .unavailable(reason: "pasteboard.sqlite is not open") : .memory,
                                        contentCheck: Self.jsonProblem)
    }

    /// The pasteboards now (for `status`), expired ones not yet emptied.
    var boards: [String: Pasteboard] { scheduler.pasteboards.boards }

    /// Takes the store and what it held at the daemon's start, and empties what expired while
    /// the daemon was not running. `problem` says why there is no store, if there is none.
    func adopt(store: PasteboardStore?, saved: [Pasteboard], problem: String?) {
        loop.assertInEventLoop()
        self.store = store
        let storage: PasteboardScheduler.Storage = store != nil ? .saved : scheduler.storage == .memory ? .memory : .unavailable(reason: problem ?? "pasteboard.sqlite is not open")
        scheduler.restore(saved, storage: storage)
        perform(scheduler.expire(now: clock()))
    }

    /// Every pasteboard that holds items or has changed (`lsctl pasteboard list`), expired
    /// ones emptied first.
    func list() -> [PasteboardSnapshot] {
        loop.assertInEventLoop()
        let now = clock()
        perform(scheduler.expire(now: now))
        return scheduler.pasteboards.list(now: now)
    }

    // MARK: Events in

    /// A pasteboard request as received. Answers sent here are flushed with the read batch.
    func requested(_ request: PasteboardRequest, id: UInt32, from connection: ClientConnection) {
        loop.assertInEventLoop()
        let peer = Peer(connection.serial)
        peers[peer] = connection
        perform(scheduler.requested(request, id: id, from: peer, now: clock()))
        connection.awaitsPasteboard = !scheduler.isIdle(peer)
        if !connection.awaitsPasteboard { peers[peer] = nil }
    }

    /// What `connection` has waiting is dropped; what is under way ends unanswered.
    func connectionClosed(_ connection: ClientConnection) {
        loop.assertInEventLoop()
        let peer = Peer(connection.serial)
        peers[peer] = nil
        perform(scheduler.connectionClosed(peer))
    }

    /// An event from work done off the loop or a timer: its answers are written at once.
    private func handle(_ event: (inout PasteboardScheduler, UInt64) -> [PasteboardScheduler.Action]) {
        loop.assertInEventLoop()
        let actions = event(&scheduler, clock())
        perform(actions)
        connections.flush()
    }

    // MARK: Actions out

    private func perform(_ actions: [PasteboardScheduler.Action]) {
        for action in actions {
            switch action {
            case .answer(let peer, let id, let operation, let reply):
                guard let connection = peers[peer] else { continue }
                connections.send(Envelope(id: id, message(for: reply, operation, from: connection)), to: connection)
            case .checkPassword(let token, let work):
                check(work, token: token)
            case .armDelay(let token, let after):
                loop.assumeIsolated().scheduleTask(in: TimeAmount(after)) { [self] in
                    handle { $0.delayOver(token, now: $1) }
                }
            case .save(let token, let board):
                save(board, token: token)
            case .record(let board):
                guard let store else { continue }
                saver.async { _ = try? store.record(board) }
            case .expired(let board):
                logger.info("pasteboard '\(board.name)' expired")
            case .released(let peer):
                guard let connection = peers.removeValue(forKey: peer) else { continue }
                connection.awaitsPasteboard = false
                // A peer that half-closed waits for these answers too; once they are out, it can go.
                if connection.finishedSending { connections.closeIfDone(connection) }
            }
        }
    }

    /// The answer's message, logged as the rules' decisions were: changes and refusals, not
    /// limits (a peer past one could flood the log) nor failures (logged where they happened).
    private func message(for reply: PasteboardScheduler.Reply, _ operation: PasteboardRequest.Operation, from connection: ClientConnection) -> Message {
        switch reply {
        case .applied(let snapshot):
            if operation != .paste {
                logger.info("pasteboard '\(snapshot.name)' \(operation == .copy ? "copied" : "cleared") by \(connection.identity): \(snapshot.items.count) items, change \(snapshot.changeCount)\(snapshot.persistent ? ", persistent" : "")")
            }
            return .pasteboardResult(snapshot)
        case .refused(let error):
            logger.info("pasteboard \(operation.rawValue) refused: \(error.message)", metadata: ["peer": "\(connection.identity)"])
            return .failure(OpenError(error.code, error.message))
        case .busy(let error), .failed(let error):
            return .failure(OpenError(error.code, error.message))
        }
    }

    /// Hashes or checks a password on the hashing thread, then reports back on the loop (a
    /// later task there, even when `worker` is the loop itself).
    private func check(_ work: PasswordWork, token: PasteboardScheduler.Token) {
        let hasher = hasher
        let service = NIOLoopBound(self, eventLoop: loop)
        worker.async {
            let proof = work.perform(with: hasher)
            service.eventLoop.execute {
                if proof == nil { service.value.logger.error("could not hash a pasteboard password (out of memory?)") }
                service.value.handle { $0.passwordChecked(token, proof: proof, now: $1) }
            }
        }
    }

    /// Writes a changed pasteboard on the store's queue, then reports back on the loop.
    private func save(_ board: Pasteboard, token: PasteboardScheduler.Token) {
        let store = store
        let service = NIOLoopBound(self, eventLoop: loop)
        saver.async {
            var failure: String?
            var notErased: StorageError?
            if let store {
                do { notErased = try store.record(board) } catch { failure = "\(error)" }
            } else {
                failure = "pasteboard.sqlite is not open"
            }
            service.eventLoop.execute { [notErased, failure] in
                let logger = service.value.logger
                if let notErased, let store {
                    logger.warning("pasteboard '\(board.name)' was saved, but its earlier protected items may stay in \(store.file)-wal until the next checkpoint: \(notErased)")
                }
                if let failure { logger.error("could not save pasteboard '\(board.name)': \(failure)") }
                service.value.handle { $0.saveFinished(token, error: failure, now: $1) }
            }
        }
    }

    /// A copy's `public.json` items must be JSON: nesting is bounded before Foundation's
    /// parser (it recurses per level) sees them. The scheduler asks when the copy's turn comes.
    @Sendable static func jsonProblem(_ request: PasteboardRequest) -> PasteboardError? {
        guard request.operation == .copy else { return nil }
        let name = request.name ?? Pasteboards.general
        for item in request.items where PasteboardType.conforms(item.type, to: PasteboardType.json) {
            do {
                try JSONDepth.check(item.data)
            } catch {
                return PasteboardError(.invalidRequest, "the \(item.type) item for pasteboard '\(name)' \(error); copy it as \(PasteboardType.plainText) or flatten it")
            }
            guard (try? JSONSerialization.jsonObject(with: Data(item.data), options: [.fragmentsAllowed])) != nil else {
                return PasteboardError(.invalidRequest, "the \(item.type) item for pasteboard '\(name)' is not valid JSON; copy it as \(PasteboardType.plainText) or fix it")
            }
        }
        return nil
    }
}
