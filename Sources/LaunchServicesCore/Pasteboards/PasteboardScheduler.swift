/// The order pasteboard requests are applied and answered in, as a pure state machine:
/// events in, actions out (the shape of `LaunchStateMachine`). It owns the pasteboards (the
/// rules, `Pasteboards`) and makes every decision about when a request runs; the daemon's
/// `PasteboardService` only carries out its actions (a hash on the hashing thread, a timer,
/// a save, a frame) and reports back what came of them. No clock, no I/O: wall-clock time
/// arrives as `now` (Unix seconds, for expiry) with each event.
///
/// - Each connection is a **lane**: its requests are applied in the order they came, one at
///   a time, so a copy with a password followed at once by a paste sees the copy. A lane
///   holds at most `maximumOperationsPerConnection` requests, and waiting items of at most
///   `maximumBytes` (one pasteboard's worth, so a queue costs no more than one frame).
/// - A pasteboard with a password check, a save, or a wrong password's delay under way is
///   **held**: requests for it wait (at most `maximumWaitingPerPasteboard` lanes), while
///   requests for other pasteboards go on. Per pasteboard rather than one queue for all, so
///   a guesser hammering one pasteboard does not slow the others.
/// - At most `maximumPasswordChecksWaiting` checks are handed to the one hashing thread.
/// - A wrong password is answered after `failureDelay`, and until then its connection and
///   its pasteboard stay held: one guess a second per connection and per pasteboard.
/// - A request that needs no password work and no save, from a connection with nothing
///   waiting, for a pasteboard not held, is applied and answered within its own event.
/// - A connection that closes withdraws what it has waiting; what is under way ends in its
///   own time (so closing cannot cut a wrong password's delay short), unanswered.
public struct PasteboardScheduler: Sendable {
    /// Checks what the rules cannot read (the daemon: that `public.json` items parse, which
    /// needs Foundation); a problem refuses the request when its turn comes, before `apply`.
    public typealias ContentCheck = @Sendable (PasteboardRequest) -> PasteboardError?

    /// How long a wrong password's answer waits, and how long its connection and its
    /// pasteboard take no further attempt. A fixed cost, not a growing one: growth would let
    /// a guesser lock the owner out for as long as it liked.
    public static let failureDelay: Duration = .seconds(1)
    /// Lanes that may wait for one held pasteboard; past it, `unavailable` at once. Small, so
    /// the owner's request either waits a few seconds or is told to retry, never both at length.
    public static let maximumWaitingPerPasteboard = 4

    public internal(set) var pasteboards: Pasteboards
    public internal(set) var storage: Storage
    let contentCheck: ContentCheck

    /// One connection's requests not answered yet.
    struct Lane: Sendable {
        var queued: [Queued] = []
        /// The first request is under way (`underWay[current]`); the others wait behind it.
        var current: Token?
        /// Some request of this lane had to wait (it outlived an event), so its end is announced.
        var waited = false
        /// The connection closed; what is under way ends unanswered.
        var closed = false
        var count: Int { queued.count + (current == nil ? 0 : 1) }
        var queuedBytes: Int { queued.reduce(0) { $0 + $1.byteCount } }
    }

    struct Queued: Sendable {
        let id: UInt32
        let request: PasteboardRequest
        var board: String { request.name ?? Pasteboards.general }
        var byteCount: Int { request.items.reduce(0) { $0 + $1.data.count + $1.type.utf8.count } }
    }

    /// A request under way, holding its lane and its pasteboard.
    struct Work: Sendable {
        let peer: Peer
        let id: UInt32
        let request: PasteboardRequest
        var stage: Stage
        var board: String { request.name ?? Pasteboards.general }
    }

    enum Stage: Sendable {
        /// Its password work is on the hashing thread.
        case checking
        /// Applied in memory; answered with `reply` once saved, or `previous` is put back.
        case saving(previous: Pasteboard?, reply: Reply, proof: PasswordProof)
        /// A wrong password: answered with `reply` when the delay is over.
        case coolingDown(reply: Reply)
    }

    var lanes: [Peer: Lane] = [:]
    /// Each held pasteboard and the work holding it.
    var holders: [String: Token] = [:]
    /// Lanes whose first request waits for a held pasteboard, in arrival order.
    var waiting: [String: [Peer]] = [:]
    var underWay: [Token: Work] = [:]
    /// Password checks handed to the hashing thread and not reported back.
    public internal(set) var checksInProgress = 0
    var lastToken: UInt64 = 0

    public init(pasteboards: Pasteboards = Pasteboards(), storage: Storage = .memory, contentCheck: @escaping ContentCheck = { _ in nil }) {
        self.pasteboards = pasteboards
        self.storage = storage
        self.contentCheck = contentCheck
    }

    /// Whether `peer` has nothing waiting or under way (a half-closed connection may close).
    public func isIdle(_ peer: Peer) -> Bool { lanes[peer] == nil }
    /// The pasteboards held by work under way, by name.
    public var heldPasteboards: [String] { holders.keys.sorted() }

    // MARK: Events

    /// A request arrived from `peer`.
    public mutating func requested(_ request: PasteboardRequest, id: UInt32, from peer: Peer, now: UInt64) -> [Action] {
        let limits = pasteboards.limits
        var lane = lanes[peer] ?? Lane()
        guard !lane.closed else { return [] }
        guard lane.count < limits.maximumOperationsPerConnection else {
            return [.answer(peer, id: id, request.operation, .busy(PasteboardError(.unavailable, "this connection already has \(lane.count) pasteboard requests waiting or under way, the limit (pasteboard.maximumOperationsPerConnection); wait for their answers")))]
        }
        let queued = Queued(id: id, request: request)
        let waitingBytes = lane.queuedBytes + queued.byteCount
        guard lane.count == 0 || waitingBytes <= limits.maximumBytes else {
            return [.answer(peer, id: id, request.operation, .busy(PasteboardError(.unavailable, "this connection's waiting pasteboard requests would hold \(waitingBytes) bytes, more than one pasteboard may (pasteboard.maximumBytes, \(limits.maximumBytes)); wait for their answers")))]
        }
        lane.queued.append(queued)
        lanes[peer] = lane
        var actions: [Action] = []
        advance(peer, now: now, into: &actions)
        lanes[peer]?.waited = true
        return actions
    }

    /// The password work of `token` is done: `proof`, or `nil` when the hasher failed.
    public mutating func passwordChecked(_ token: Token, proof: PasswordProof?, now: UInt64) -> [Action] {
        guard let work = underWay[token], case .checking = work.stage else { return [] }
        checksInProgress -= 1
        var actions: [Action] = []
        guard let proof else {
            finish(token, .failed(PasteboardError(.unavailable, "the password for pasteboard '\(work.board)' could not be hashed (out of memory?); nothing was changed")), proof: nil, now: now, into: &actions)
            return actions
        }
        switch apply(work.request, proof: proof, now: now) {
        case .answer(let reply):
            finish(token, reply, proof: proof, now: now, into: &actions)
        case .save(let board, let previous, let reply):
            underWay[token]?.stage = .saving(previous: previous, reply: reply, proof: proof)
            actions.append(.save(token, board))
        }
        return actions
    }

    /// The save of `token` is done: `error` says why it failed, or `nil`. A failed save puts
    /// the pasteboard back as it was, and the answer says nothing was changed.
    public mutating func saveFinished(_ token: Token, error: String?, now: UInt64) -> [Action] {
        guard let work = underWay[token], case .saving(let previous, let reply, let proof) = work.stage else { return [] }
        var actions: [Action] = []
        if let error {
            pasteboards.restore(previous, named: work.board)
            finish(token, .failed(PasteboardError(.unavailable, "pasteboard '\(work.board)' could not be saved (\(error)); nothing was changed")), proof: proof, now: now, into: &actions)
        } else {
            finish(token, reply, proof: proof, now: now, into: &actions)
        }
        return actions
    }

    /// The delay after the wrong password of `token` is over: answered, lane and pasteboard free.
    public mutating func delayOver(_ token: Token, now: UInt64) -> [Action] {
        guard let work = underWay[token], case .coolingDown(let reply) = work.stage else { return [] }
        var actions: [Action] = []
        complete(token, reply, now: now, into: &actions)
        return actions
    }

    /// `peer`'s connection closed: what it has waiting is dropped (nobody would read the
    /// answers); what is under way ends in its own time, unanswered.
    public mutating func connectionClosed(_ peer: Peer) -> [Action] {
        for (board, peers) in waiting where peers.contains(peer) {
            let rest = peers.filter { $0 != peer }
            waiting[board] = rest.isEmpty ? nil : rest
        }
        guard var lane = lanes[peer] else { return [] }
        if lane.current == nil {
            lanes[peer] = nil
        } else {
            lane.queued.removeAll()
            lane.closed = true
            lanes[peer] = lane
        }
        return []
    }

    /// Empties the pasteboards whose items expired by `now` (lazily, when they are listed).
    public mutating func expire(now: UInt64) -> [Action] {
        pasteboards.expireAll(now: now).flatMap { board -> [Action] in
            storage == .saved ? [.expired(board), .record(board)] : [.expired(board)]
        }
    }

    /// Takes the pasteboards saved by an earlier run, and where changes are kept from now on.
    public mutating func restore(_ saved: [Pasteboard], storage: Storage) {
        pasteboards = Pasteboards(limits: pasteboards.limits, restoring: saved)
        self.storage = storage
    }
}
