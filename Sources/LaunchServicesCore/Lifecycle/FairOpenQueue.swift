/// The opens waiting for one app, served in turns by caller: each caller's own opens stay
/// in order, and callers take turns, one open each. A caller with a hundred opens queued
/// therefore delays another caller's single open by one open, not by a hundred.
public struct FairOpenQueue: Sendable, Equatable {
    /// Callers with opens waiting, in the order of their next turn.
    private var turns: [UInt64] = []
    private var waiting: [UInt64: [OpenRequest]] = [:]
    /// The caller served last (or now): it has had its turn, so the next goes to another.
    private var lastServed: UInt64?
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ request: OpenRequest) {
        if waiting[request.caller] == nil { turns.append(request.caller) }
        waiting[request.caller, default: []].append(request)
        count += 1
    }

    /// An open of `caller` began without waiting (nothing was queued): that was its turn.
    public mutating func served(_ caller: UInt64) {
        lastServed = caller
    }

    /// The next open: the first of the caller whose turn it is; that caller then goes to
    /// the back of the line if it has more. The caller served last waits for the others.
    public mutating func popNext() -> OpenRequest? {
        guard !turns.isEmpty else { return nil }
        if turns.count > 1, turns.first == lastServed { turns.append(turns.removeFirst()) }
        let caller = turns.removeFirst()
        lastServed = caller
        guard var mine = waiting[caller], !mine.isEmpty else { return popNext() }
        let next = mine.removeFirst()
        count -= 1
        if mine.isEmpty {
            waiting[caller] = nil
        } else {
            waiting[caller] = mine
            turns.append(caller)
        }
        return next
    }

    /// Drops every open whose token is in `tokens` (its caller left).
    public mutating func remove(tokens: Set<LaunchToken>) {
        for (caller, mine) in waiting {
            let kept = mine.filter { !tokens.contains($0.token) }
            guard kept.count != mine.count else { continue }
            count -= mine.count - kept.count
            waiting[caller] = kept.isEmpty ? nil : kept
        }
        turns.removeAll { waiting[$0] == nil }
    }

    public func contains(token: LaunchToken) -> Bool {
        waiting.values.contains { $0.contains { $0.token == token } }
    }

    /// The tokens in the order they would be served.
    public var tokens: [LaunchToken] {
        var copy = self
        var result: [LaunchToken] = []
        while let next = copy.popNext() { result.append(next.token) }
        return result
    }
}
