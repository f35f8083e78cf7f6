import LaunchServicesCore
import Testing

/// Opens queued for one app are served in turns by caller, each caller's own in order.
@Suite("Fair open queue")
struct FairOpenQueueTests {
    func request(_ token: LaunchToken, caller: UInt64) -> OpenRequest {
        OpenRequest(token: token, url: "a:\(token)", sourceApplication: "s", caller: caller)
    }

    @Test("a caller with many opens queued delays another caller's open by one turn, not by all of them")
    func turns() {
        var queue = FairOpenQueue()
        for token: LaunchToken in [1, 2, 3, 4, 5] { queue.append(request(token, caller: 1)) }
        queue.append(request(10, caller: 2))
        queue.append(request(11, caller: 2))
        queue.append(request(20, caller: 3))
        #expect(queue.count == 8)
        #expect(queue.tokens == [1, 10, 20, 2, 11, 3, 4, 5])
        var served: [LaunchToken] = []
        while let next = queue.popNext() { served.append(next.token) }
        #expect(served == [1, 10, 20, 2, 11, 3, 4, 5])
        #expect(queue.isEmpty)
    }

    @Test("removing a departed caller's tokens keeps the others' order and the count")
    func remove() {
        var queue = FairOpenQueue()
        for token: LaunchToken in [1, 2, 3] { queue.append(request(token, caller: 1)) }
        queue.append(request(10, caller: 2))
        queue.remove(tokens: [1, 2, 3])
        #expect(queue.count == 1)
        #expect(queue.tokens == [10])
        #expect(!queue.contains(token: 2))
        queue.append(request(4, caller: 1))
        #expect(queue.tokens == [10, 4], "a returning caller joins the back of the line")
    }

    @Test("a caller whose open began without waiting has had its turn: a newcomer goes next")
    func servedCallerWaits() {
        var queue = FairOpenQueue()
        queue.served(1)
        for token: LaunchToken in [2, 3, 4] { queue.append(request(token, caller: 1)) }
        queue.append(request(9, caller: 2))
        #expect(queue.tokens == [9, 2, 3, 4])
        queue.append(request(10, caller: 2))
        #expect(queue.popNext()?.token == 9)
        #expect(queue.popNext()?.token == 2, "then back to the first caller: turns alternate")
        #expect(queue.popNext()?.token == 10)
    }

    @Test("the state machine serves a second caller's open before the first caller's backlog, the in-flight open counting as the first caller's turn")
    func machineTakesTurns() {
        var m = LaunchStateMachine()
        _ = m.open(request(1, caller: 1), app: "a", now: 0)
        m.spawned(app: "a", pid: 7)
        for token: LaunchToken in [2, 3, 4] { #expect(m.open(request(token, caller: 1), app: "a", now: 1).isEmpty) }
        #expect(m.open(request(9, caller: 2), app: "a", now: 2).isEmpty)
        #expect(m.waitingRequests == [1, 9, 2, 3, 4])
    }
}
