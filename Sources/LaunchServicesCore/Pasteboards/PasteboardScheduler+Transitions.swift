/// How a request moves: its turn on its lane, its password work, its apply and save, its
/// answer, and the lanes that were waiting for its pasteboard.
extension PasteboardScheduler {
    /// What applying a request gives: an answer now, or a change to save first.
    enum Applied {
        case answer(Reply)
        /// Applied in memory; answer `reply` once `board` is saved, or put `previous` back.
        case save(Pasteboard, previous: Pasteboard?, Reply)
    }

    /// Starts `peer`'s requests in order until one has to wait: for password work, a save,
    /// the delay after a wrong password, or a pasteboard another lane holds.
    mutating func advance(_ peer: Peer, now: UInt64, into actions: inout [Action]) {
        while lanes[peer]?.current == nil, let next = lanes[peer]?.queued.first {
            if holders[next.board] != nil {
                var queue = waiting[next.board] ?? []
                if queue.contains(peer) { return }
                if queue.count < Self.maximumWaitingPerPasteboard {
                    queue.append(peer)
                    waiting[next.board] = queue
                    return
                }
                lanes[peer]?.queued.removeFirst()
                actions.append(.answer(peer, id: next.id, next.request.operation, .busy(PasteboardError(.unavailable, "pasteboard '\(next.board)' is busy checking passwords and \(queue.count) requests already wait for it; try again in a second"))))
                continue
            }
            lanes[peer]?.queued.removeFirst()
            start(next, from: peer, now: now, into: &actions)
        }
        retireIfIdle(peer, into: &actions)
    }

    /// Answers a request at once, or hands its password work (or its save) out, holding its
    /// lane and its pasteboard until that is done.
    private mutating func start(_ next: Queued, from peer: Peer, now: UInt64, into actions: inout [Action]) {
        let answer = { (reply: Reply) in Action.answer(peer, id: next.id, next.request.operation, reply) }
        let work: PasswordWork
        do {
            work = try pasteboards.passwordWork(for: next.request, now: now)
        } catch {
            actions.append(answer(.refused(error)))
            return
        }
        guard work != .none else {
            switch apply(next.request, proof: .none, now: now) {
            case .answer(let reply):
                actions.append(answer(reply))
            case .save(let board, let previous, let reply):
                let token = hold(Work(peer: peer, id: next.id, request: next.request, stage: .saving(previous: previous, reply: reply, proof: .none)))
                actions.append(.save(token, board))
            }
            return
        }
        let limit = pasteboards.limits.maximumPasswordChecksWaiting
        guard checksInProgress < limit else {
            actions.append(answer(.busy(PasteboardError(.unavailable, "\(checksInProgress) pasteboard password checks are already waiting, the limit (pasteboard.maximumPasswordChecksWaiting); try again in a second"))))
            return
        }
        checksInProgress += 1
        let token = hold(Work(peer: peer, id: next.id, request: next.request, stage: .checking))
        actions.append(.checkPassword(token, work))
    }

    /// Puts `work` under way: it holds its lane and its pasteboard until `complete`.
    private mutating func hold(_ work: Work) -> Token {
        lastToken &+= 1
        let token = Token(lastToken)
        underWay[token] = work
        holders[work.board] = token
        lanes[work.peer]?.current = token
        return token
    }

    /// Applies a request whose password work is done (`proof`), or that needed none, to the
    /// pasteboards. A refused request changes nothing.
    mutating func apply(_ request: PasteboardRequest, proof: PasswordProof, now: UInt64) -> Applied {
        if let problem = contentCheck(request) { return .answer(.refused(problem)) }
        var next = pasteboards
        let result: (snapshot: PasteboardSnapshot, changed: Pasteboard?)
        do {
            result = try next.apply(request, now: now, proof: proof)
        } catch {
            return .answer(.refused(error))
        }
        // A state folder whose pasteboard.sqlite could not be opened: a kept pasteboard
        // would silently not be kept, so the copy is refused by name and changes nothing.
        if let changed = result.changed, changed.persistent, !changed.items.isEmpty, case .unavailable(let reason) = storage {
            return .answer(.refused(PasteboardError(.unavailable, "pasteboard '\(changed.name)' cannot be kept: \(reason); copy it without --persistent")))
        }
        let previous = pasteboards.boards[result.snapshot.name]
        pasteboards = next
        if let changed = result.changed, storage == .saved {
            return .save(changed, previous: previous, .applied(result.snapshot))
        }
        return .answer(.applied(result.snapshot))
    }

    /// Answers work whose result is in: a wrong password after `failureDelay` (its lane and
    /// pasteboard held until then), anything else now.
    mutating func finish(_ token: Token, _ reply: Reply, proof: PasswordProof?, now: UInt64, into actions: inout [Action]) {
        if proof == .wrong, case .refused(let error) = reply, error.code == .notPermitted {
            underWay[token]?.stage = .coolingDown(reply: .refused(PasteboardError(.notPermitted, error.message + "; answered after a 1 s delay, as every wrong password is")))
            actions.append(.armDelay(token, after: Self.failureDelay))
            return
        }
        complete(token, reply, now: now, into: &actions)
    }

    /// Ends work: answers it (unless its connection closed), frees its pasteboard for the
    /// lanes waiting for it, then lets its own lane go on.
    mutating func complete(_ token: Token, _ reply: Reply, now: UInt64, into actions: inout [Action]) {
        guard let work = underWay.removeValue(forKey: token) else { return }
        if let lane = lanes[work.peer], !lane.closed {
            actions.append(.answer(work.peer, id: work.id, work.request.operation, reply))
        }
        lanes[work.peer]?.current = nil
        if holders[work.board] == token { holders[work.board] = nil }
        while holders[work.board] == nil, let next = nextWaiting(for: work.board) {
            advance(next, now: now, into: &actions)
        }
        advance(work.peer, now: now, into: &actions)
    }

    /// The first lane waiting for `board`, taken off its list.
    private mutating func nextWaiting(for board: String) -> Peer? {
        guard var queue = waiting[board], !queue.isEmpty else { return nil }
        let next = queue.removeFirst()
        waiting[board] = queue.isEmpty ? nil : queue
        return next
    }

    /// Forgets a lane with nothing left, so an idle connection costs nothing; announces it
    /// when its requests had to wait, so a half-closed connection can close.
    private mutating func retireIfIdle(_ peer: Peer, into actions: inout [Action]) {
        guard let lane = lanes[peer], lane.queued.isEmpty, lane.current == nil else { return }
        lanes[peer] = nil
        if lane.waited && !lane.closed { actions.append(.released(peer)) }
    }
}
