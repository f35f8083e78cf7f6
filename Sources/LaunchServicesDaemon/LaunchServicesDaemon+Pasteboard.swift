import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// The pasteboards: the pure rules live in `Pasteboards`; here they meet the clock,
/// JSON validation, the password hasher and the store. A change to a kept (persistent)
/// pasteboard is saved off the loop before it is answered; meanwhile the pasteboard is
/// held, so no other request sees it, and a failed save puts it back as it was. Password
/// hashes and checks run on `PasteboardTraffic`'s thread, never on the loop.
extension LaunchServicesDaemon {
    var unixNow: UInt64 { UInt64(max(0, wallClock() / 1000)) }

    /// A pasteboard request as received: answered at once when it needs no password work and
    /// nothing is ahead of it, else in its turn (`PasteboardTraffic`).
    func pasteboardRequested(_ request: PasteboardRequest, id: UInt32, from connection: ClientConnection) {
        loop.assertInEventLoop()
        let lane = pasteboardTraffic.lane(for: connection)
        let limits = configuration.pasteboardLimits
        // Refusals here are not logged: a peer past its limit could otherwise flood the log.
        guard lane.count < limits.maximumOperationsPerConnection else {
            send(Envelope(id: id, .failure(OpenError(.unavailable, "this connection already has \(lane.count) pasteboard requests waiting or under way, the limit (pasteboard.maximumOperationsPerConnection); wait for their answers"))), to: connection)
            return
        }
        // Waiting copies keep their items: at most one pasteboard's worth per connection, so
        // a queue costs no more memory than the frame it came in.
        let operation = PasteboardTraffic.Operation(id: id, request: request)
        let waitingBytes = lane.queuedBytes + operation.byteCount
        guard lane.count == 0 || waitingBytes <= limits.maximumBytes else {
            send(Envelope(id: id, .failure(OpenError(.unavailable, "this connection's waiting pasteboard requests would hold \(waitingBytes) bytes, more than one pasteboard may (pasteboard.maximumBytes, \(limits.maximumBytes)); wait for their answers"))), to: connection)
            return
        }
        lane.queued.append(operation)
        advance(lane)
    }

    /// What applying a request gives: an answer, or a changed pasteboard to save first.
    enum PasteboardAnswer {
        case now(Message)
        /// Applied in memory; answer `message` once `board` is saved, or put `previous` back.
        case afterSaving(Pasteboard, previous: Pasteboard?, Message)
    }

    /// Applies a request whose password work is done (`proof`), or that needs none.
    func pasteboard(_ request: PasteboardRequest, from connection: ClientConnection, proof: PasswordProof = .none) -> PasteboardAnswer {
        switch applyPasteboard(request, from: connection, proof: proof) {
        case .success(let result): return result
        case .failure(let refusal): return .now(.failure(refusal))
        }
    }

    private func applyPasteboard(_ request: PasteboardRequest, from connection: ClientConnection, proof: PasswordProof) -> Result<PasteboardAnswer, OpenError> {
        loop.assertInEventLoop()
        for item in request.items where request.operation == .copy && PasteboardType.conforms(item.type, to: PasteboardType.json) {
            // JSONSerialization recurses per level: nesting is bounded before it parses.
            do {
                try JSONDepth.check(item.data)
            } catch {
                return .failure(OpenError(.invalidRequest, "the \(item.type) item for pasteboard '\(request.name ?? Pasteboards.general)' \(error); copy it as \(PasteboardType.plainText) or flatten it"))
            }
            guard (try? JSONSerialization.jsonObject(with: Data(item.data), options: [.fragmentsAllowed])) != nil else {
                return .failure(OpenError(.invalidRequest, "the \(item.type) item for pasteboard '\(request.name ?? Pasteboards.general)' is not valid JSON; copy it as \(PasteboardType.plainText) or fix it"))
            }
        }
        var next = pasteboards
        let result: (snapshot: PasteboardSnapshot, changed: Pasteboard?)
        do {
            result = try next.apply(request, now: unixNow, proof: proof)
        } catch {
            logger.info("pasteboard \(request.operation.rawValue) refused: \(error.message)", metadata: ["peer": "\(connection.identity)"])
            return .failure(OpenError(error.code, error.message))
        }
        // A state folder whose pasteboard.sqlite could not be opened: a kept pasteboard
        // would silently not be kept, so the copy is refused by name and changes nothing.
        if let changed = result.changed, changed.persistent, !changed.items.isEmpty, pasteboardStore == nil, stateFolder != nil {
            return .failure(OpenError(.unavailable, "pasteboard '\(changed.name)' cannot be kept: \(storageProblems.first ?? "pasteboard.sqlite is not open"); copy it without --persistent"))
        }
        let previous = pasteboards.boards[result.snapshot.name]
        pasteboards = next
        if request.operation != .paste {
            logger.info("pasteboard '\(result.snapshot.name)' \(request.operation == .copy ? "copied" : "cleared") by \(connection.identity): \(result.snapshot.items.count) items, change \(result.snapshot.changeCount)\(result.snapshot.persistent ? ", persistent" : "")")
        }
        if let changed = result.changed, pasteboardStore != nil {
            return .success(.afterSaving(changed, previous: previous, .pasteboardResult(result.snapshot)))
        }
        return .success(.now(.pasteboardResult(result.snapshot)))
    }

    /// Saves a changed pasteboard off the loop, then answers with `message` on the loop; if
    /// the save fails, the pasteboard is put back as it was and the answer says so.
    private func save(_ board: Pasteboard, previous: Pasteboard?, _ message: Message, then done: @escaping (Message) -> Void) {
        guard let store = pasteboardStore else { return done(message) }
        let finish = NIOLoopBound((self, done), eventLoop: loop)
        pasteboardTraffic.saver.async {
            let failure: Error?
            var notErased: StorageError?
            do { notErased = try store.record(board); failure = nil } catch { failure = error }
            finish.eventLoop.execute { [notErased] in
                let (daemon, done) = finish.value
                if let notErased {
                    daemon.logger.warning("pasteboard '\(board.name)' was saved, but its earlier protected items may stay in \(store.file)-wal until the next checkpoint: \(notErased)")
                }
                guard let failure else { return done(message) }
                daemon.pasteboards.restore(previous, named: board.name)
                daemon.logger.error("could not save pasteboard '\(board.name)': \(failure)")
                done(.failure(OpenError(.unavailable, "pasteboard '\(board.name)' could not be saved (\(failure)); nothing was changed")))
            }
        }
    }

    /// Starts a lane's requests in order until one has to wait: for password work, for the
    /// delay after a wrong password, or for a pasteboard another lane holds.
    private func advance(_ lane: PasteboardTraffic.Lane) {
        let traffic = pasteboardTraffic
        while !lane.busy, let next = lane.queued.first {
            guard lane.connection.channel.isActive else {
                // Nobody is left to answer; dropping the rest also keeps a peer that reconnects
                // from leaving work behind.
                lane.queued.removeAll()
                break
            }
            if traffic.held.contains(next.board) {
                var queue = traffic.waiting[next.board] ?? []
                if queue.contains(where: { $0 === lane }) { return }
                if queue.count < PasteboardTraffic.maximumWaitingPerPasteboard {
                    queue.append(lane)
                    traffic.waiting[next.board] = queue
                    return
                }
                lane.queued.removeFirst()
                send(Envelope(id: next.id, .failure(OpenError(.unavailable, "pasteboard '\(next.board)' is busy checking passwords and \(queue.count) requests already wait for it; try again in a second"))), to: lane.connection)
                continue
            }
            lane.queued.removeFirst()
            start(next, on: lane)
        }
        traffic.retireIfIdle(lane)
        // A peer that half-closed waits for these answers too; once they are out, it can go.
        if traffic.lanes[ObjectIdentifier(lane.connection)] == nil, lane.connection.finishedSending {
            closeIfDone(lane.connection)
        }
    }

    /// Answers a request at once, or hands its password work to the hashing thread.
    private func start(_ operation: PasteboardTraffic.Operation, on lane: PasteboardTraffic.Lane) {
        let traffic = pasteboardTraffic
        let connection = lane.connection
        let work: PasswordWork
        do {
            work = try pasteboards.passwordWork(for: operation.request, now: unixNow)
        } catch {
            logger.info("pasteboard \(operation.request.operation.rawValue) refused: \(error.message)", metadata: ["peer": "\(connection.identity)"])
            send(Envelope(id: operation.id, .failure(OpenError(error.code, error.message))), to: connection)
            return
        }
        guard work != .none else {
            switch pasteboard(operation.request, from: connection) {
            case .now(let answer):
                send(Envelope(id: operation.id, answer), to: connection)
            case .afterSaving(let board, let previous, let answer):
                // Held until saved: the lane's next request and the pasteboard's next wait.
                traffic.held.insert(operation.board)
                lane.busy = true
                save(board, previous: previous, answer) { [self] answer in
                    send(Envelope(id: operation.id, answer), to: connection)
                    lane.busy = false
                    handOver(operation.board)
                    advance(lane)
                    flushPending()
                }
            }
            return
        }
        let limit = configuration.pasteboardLimits.maximumPasswordChecksWaiting
        guard traffic.checksInProgress < limit else {
            send(Envelope(id: operation.id, .failure(OpenError(.unavailable, "\(traffic.checksInProgress) pasteboard password checks are already waiting, the limit (pasteboard.maximumPasswordChecksWaiting); try again in a second"))), to: connection)
            return
        }
        traffic.checksInProgress += 1
        traffic.held.insert(operation.board)
        lane.busy = true
        let hasher = traffic.hasher
        let finish = NIOLoopBound((self, lane), eventLoop: loop)
        traffic.worker.async {
            let proof = work.perform(with: hasher)
            finish.eventLoop.execute {
                let (daemon, lane) = finish.value
                daemon.finish(operation, on: lane, proof: proof)
            }
        }
    }

    /// Applies a request whose password work is done. A wrong password is answered after
    /// `failureDelay`, and until then its connection's next request and its pasteboard's next
    /// check wait too: one guess per second per connection and per pasteboard.
    private func finish(_ operation: PasteboardTraffic.Operation, on lane: PasteboardTraffic.Lane, proof: PasswordProof?) {
        loop.assertInEventLoop()
        pasteboardTraffic.checksInProgress -= 1
        let connection = lane.connection
        guard let proof else {
            logger.error("could not hash a password for pasteboard '\(operation.board)'")
            return reply(operation, on: lane, .failure(OpenError(.unavailable, "the password for pasteboard '\(operation.board)' could not be hashed (out of memory?); nothing was changed")), proof: nil)
        }
        switch pasteboard(operation.request, from: connection, proof: proof) {
        case .now(let answer):
            reply(operation, on: lane, answer, proof: proof)
        case .afterSaving(let board, let previous, let answer):
            save(board, previous: previous, answer) { [self] answer in reply(operation, on: lane, answer, proof: proof) }
        }
    }

    /// Answers a request whose password work is done, frees its lane and its pasteboard.
    private func reply(_ operation: PasteboardTraffic.Operation, on lane: PasteboardTraffic.Lane, _ given: Message, proof: PasswordProof?) {
        let connection = lane.connection
        var answer = given
        var delay: TimeAmount = .zero
        if proof == .wrong, case .failure(let error) = answer, error.code == .notPermitted {
            delay = PasteboardTraffic.failureDelay
            answer = .failure(OpenError(.notPermitted, error.message + "; answered after a 1 s delay, as every wrong password is"))
        }
        let reply = Envelope(id: operation.id, answer)
        let done = { [self] in
            send(reply, to: connection)
            lane.busy = false
            handOver(operation.board)
            advance(lane)
            flushPending()
        }
        if delay == .zero { done() } else { loop.assumeIsolated().scheduleTask(in: delay, done) }
    }

    /// Frees a pasteboard and lets the lanes waiting for it go, in order, until one holds it.
    private func handOver(_ board: String) {
        let traffic = pasteboardTraffic
        traffic.held.remove(board)
        while !traffic.held.contains(board), let next = traffic.nextWaiting(for: board) {
            advance(next)
        }
    }

    /// Empties expired pasteboards and forgets the persistent ones among them (the store
    /// is written off the loop; a failed write only means the next start expires it again).
    func expirePasteboards() {
        for board in pasteboards.expireAll(now: unixNow) {
            logger.info("pasteboard '\(board.name)' expired")
            if let store = pasteboardStore {
                pasteboardTraffic.saver.async { _ = try? store.record(board) }
            }
        }
    }
}
