import LaunchServicesCore
import Testing

/// `PasteboardScheduler`'s bounds, a connection that leaves, work whose token is stale, and
/// saving: each event in, the exact list of actions out.
@Suite("PasteboardScheduler: limits, closed connections, stale tokens, saving")
struct PasteboardSchedulerLimitTests: PasteboardSchedulerFixtures {
    func busy(_ message: String) -> PasteboardScheduler.Reply { .busy(PasteboardError(.unavailable, message)) }

    // MARK: Limits, each refused by name

    @Test("a connection may have only maximumOperationsPerConnection requests waiting or under way")
    func operationsPerConnection() {
        var s = scheduler([protected("s")], limits: PasteboardLimits(maximumOperationsPerConnection: 3))
        #expect(s.requested(paste("s", "guess"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "guess", verifier: "v-right"))])
        #expect(s.requested(paste("t"), id: 2, from: a, now: now) == [])
        #expect(s.requested(paste("t"), id: 3, from: a, now: now) == [])
        #expect(s.requested(paste("t"), id: 4, from: a, now: now) == [
            .answer(a, id: 4, .paste, busy("this connection already has 3 pasteboard requests waiting or under way, the limit (pasteboard.maximumOperationsPerConnection); wait for their answers")),
        ])
        #expect(s.requested(paste("t"), id: 1, from: b, now: now) == [.answer(b, id: 1, .paste, .applied(snapshot("t", change: 0, [])))], "the limit is per connection")
    }

    @Test("waiting copies on one connection hold at most one pasteboard's worth (maximumBytes)")
    func waitingBytes() {
        var s = scheduler([protected("s")], limits: PasteboardLimits(maximumBytes: 1000))
        let big = { (name: String) in PasteboardRequest(.copy, name: name, items: [PasteboardItem(type: "public.data", data: Array(repeating: 7, count: 600))]) }
        #expect(s.requested(paste("s", "guess"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "guess", verifier: "v-right"))])
        #expect(s.requested(big("q2"), id: 2, from: a, now: now) == [])
        #expect(s.requested(big("q3"), id: 3, from: a, now: now) == [
            .answer(a, id: 3, .copy, busy("this connection's waiting pasteboard requests would hold 1222 bytes, more than one pasteboard may (pasteboard.maximumBytes, 1000); wait for their answers")),
        ])
    }

    @Test("password checks handed to the hashing thread are bounded (maximumPasswordChecksWaiting)")
    func checksWaiting() {
        var s = scheduler(limits: PasteboardLimits(maximumPasswordChecksWaiting: 1))
        #expect(s.requested(copy("a", "x", password: "pw"), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "pw"))])
        #expect(s.requested(copy("b", "x", password: "pw"), id: 1, from: b, now: now) == [
            .answer(b, id: 1, .copy, busy("1 pasteboard password checks are already waiting, the limit (pasteboard.maximumPasswordChecksWaiting); try again in a second")),
        ])
        #expect(s.isIdle(b))
        #expect(s.heldPasteboards == ["a"], "the refused copy holds nothing")
        _ = s.passwordChecked(1, proof: .matches(verifier: "v"), now: now)
        #expect(s.requested(copy("b", "x", password: "pw"), id: 2, from: b, now: now) == [.checkPassword(2, .makeVerifier(password: "pw"))])
    }

    @Test("at most maximumWaitingPerPasteboard connections wait for one held pasteboard; the next is told to retry")
    func waitingPerPasteboard() {
        var s = scheduler([protected("s")])
        #expect(s.requested(paste("s", "guess"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "guess", verifier: "v-right"))])
        for serial in 2...5 {
            #expect(s.requested(paste("s", "right"), id: 1, from: Peer(UInt64(serial)), now: now) == [])
        }
        #expect(s.requested(paste("s", "right"), id: 1, from: Peer(6), now: now) == [
            .answer(Peer(6), id: 1, .paste, busy("pasteboard 's' is busy checking passwords and 4 requests already wait for it; try again in a second")),
        ])
        #expect(s.isIdle(Peer(6)))
    }

    // MARK: A connection that closes

    @Test("a connection closing mid-check drops what it has waiting; its check ends unanswered, and holds the pasteboard to the end of its delay")
    func closedMidCheck() {
        var s = scheduler([protected("s"), Pasteboard(name: "t", items: text("tee"), changeCount: 1)])
        #expect(s.requested(paste("s", "guess"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "guess", verifier: "v-right"))])
        #expect(s.requested(paste("t"), id: 2, from: a, now: now) == [])
        #expect(s.requested(PasteboardRequest(.clear, name: "t"), id: 3, from: a, now: now) == [])
        #expect(s.requested(paste("s", "right"), id: 1, from: b, now: now) == [])
        #expect(s.connectionClosed(a) == [])
        #expect(!s.isIdle(a), "its check is still on the hashing thread")
        #expect(s.checksInProgress == 1, "and still counts against the bound")
        // Closing does not cut a wrong password's delay short: the pasteboard stays held.
        #expect(s.passwordChecked(1, proof: .wrong, now: now) == [.armDelay(1, after: .seconds(1))])
        #expect(s.heldPasteboards == ["s"])
        // Nothing is answered to the closed connection; its queued clear never ran.
        #expect(s.delayOver(1, now: now) == [.checkPassword(2, .check(password: "right", verifier: "v-right"))])
        #expect(s.isIdle(a))
        #expect(s.pasteboards.boards["t"]?.items == text("tee"))
    }

    @Test("a copy under way when its connection closes is applied in its own time, unanswered")
    func closedCopyEnds() {
        var s = scheduler()
        #expect(s.requested(copy("k", "kept", password: "pw"), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "pw"))])
        #expect(s.connectionClosed(a) == [])
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v"), now: now) == [])
        #expect(s.pasteboards.boards["k"]?.items == text("kept"))
        #expect(s.isIdle(a))
        #expect(s.heldPasteboards.isEmpty)
    }

    @Test("a connection that closes while waiting for a pasteboard leaves the waiting list")
    func closedWhileWaiting() {
        var s = scheduler([protected("s")])
        #expect(s.requested(paste("s", "right"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "right", verifier: "v-right"))])
        #expect(s.requested(paste("s", "right"), id: 1, from: b, now: now) == [])
        #expect(s.requested(paste("s", "right"), id: 1, from: c, now: now) == [])
        #expect(s.connectionClosed(b) == [])
        #expect(s.isIdle(b))
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v-right"), now: now) == [
            .answer(a, id: 1, .paste, .applied(snapshot("s", change: 1, text("secret"), protected: true))),
            .checkPassword(2, .check(password: "right", verifier: "v-right")),
            .released(a),
        ], "c is next, not the closed b")
    }

    // MARK: Stale tokens

    @Test("an event whose token names no work at that stage does nothing: late, repeated or unknown")
    func staleTokens() {
        var s = scheduler([protected("s")])
        #expect(s.requested(paste("s", "guess"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "guess", verifier: "v-right"))])
        #expect(s.delayOver(1, now: now) == [], "no delay was armed: the check is still running")
        #expect(s.saveFinished(1, error: nil, now: now) == [], "nothing is being saved")
        #expect(s.passwordChecked(7, proof: .matches(verifier: "v-right"), now: now) == [], "never issued")
        #expect(s.passwordChecked(1, proof: .wrong, now: now) == [.armDelay(1, after: .seconds(1))])
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v-right"), now: now) == [], "a second result for a check already reported")
        #expect(s.delayOver(1, now: now) == [.answer(a, id: 1, .paste, wrongAnswer), .released(a)])
        #expect(s.delayOver(1, now: now) == [], "a timer fired twice")
        #expect(s.passwordChecked(1, proof: .wrong, now: now) == [])
        #expect(s.checksInProgress == 0)
        #expect(s.heldPasteboards.isEmpty)
    }

    // MARK: Saving

    @Test("a change to be kept is saved before it is answered, its pasteboard and connection held meanwhile")
    func savedBeforeAnswered() {
        var s = scheduler(storage: .saved)
        let kept = Pasteboard(name: "p", items: text("one"), changeCount: 1, persistent: true)
        #expect(s.requested(copy("p", "one", persistent: true), id: 1, from: a, now: now) == [.save(1, kept)])
        #expect(s.heldPasteboards == ["p"])
        #expect(s.requested(paste("p"), id: 2, from: a, now: now) == [])
        #expect(s.requested(paste("p"), id: 1, from: b, now: now) == [])
        let answer = PasteboardScheduler.Reply.applied(snapshot("p", change: 1, text("one"), persistent: true))
        #expect(s.saveFinished(1, error: nil, now: now) == [
            .answer(a, id: 1, .copy, answer),
            .answer(b, id: 1, .paste, answer),
            .released(b),
            .answer(a, id: 2, .paste, answer),
            .released(a),
        ])
    }

    @Test("a save that fails puts the pasteboard back as it was and answers unavailable")
    func saveFails() {
        var s = scheduler([Pasteboard(name: "p", items: text("old"), changeCount: 4, persistent: true)], storage: .saved)
        #expect(s.requested(copy("p", "new", persistent: true), id: 1, from: a, now: now) == [.save(1, Pasteboard(name: "p", items: text("new"), changeCount: 5, persistent: true))])
        #expect(s.saveFinished(1, error: "disk full", now: now) == [
            .answer(a, id: 1, .copy, .failed(PasteboardError(.unavailable, "pasteboard 'p' could not be saved (disk full); nothing was changed"))),
            .released(a),
        ])
        #expect(s.pasteboards.boards["p"] == Pasteboard(name: "p", items: text("old"), changeCount: 4, persistent: true))
    }

    @Test("a copy with a password on a kept pasteboard: checked, then saved, then answered")
    func checkedThenSaved() {
        var s = scheduler(storage: .saved)
        #expect(s.requested(copy("p", "x", password: "pw", persistent: true), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "pw"))])
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v"), now: now) == [.save(1, Pasteboard(name: "p", items: text("x"), changeCount: 1, persistent: true, passwordVerifier: "v"))])
        #expect(s.heldPasteboards == ["p"])
        #expect(s.saveFinished(1, error: nil, now: now) == [.answer(a, id: 1, .copy, .applied(snapshot("p", change: 1, text("x"), protected: true, persistent: true))), .released(a)])
    }

    @Test("without a usable store a copy to be kept is refused by name; one not kept is applied in memory")
    func storeUnavailable() {
        var s = scheduler(storage: .unavailable(reason: "pasteboard.sqlite is read-only"))
        #expect(s.requested(copy("p", "x", persistent: true), id: 1, from: a, now: now) == [
            .answer(a, id: 1, .copy, .refused(PasteboardError(.unavailable, "pasteboard 'p' cannot be kept: pasteboard.sqlite is read-only; copy it without --persistent"))),
        ])
        #expect(s.requested(copy("p", "x"), id: 2, from: a, now: now) == [.answer(a, id: 2, .copy, .applied(snapshot("p", change: 1, text("x"))))])
        var memory = scheduler(storage: .memory)
        #expect(memory.requested(copy("p", "x", persistent: true), id: 1, from: a, now: now) == [.answer(a, id: 1, .copy, .applied(snapshot("p", change: 1, text("x"), persistent: true)))])
    }

    @Test("expired pasteboards are emptied and, with a store, recorded without waiting")
    func expiry() {
        let board = Pasteboard(name: "e", items: text("soon"), changeCount: 2, expiresAt: now - 1, persistent: true)
        let emptied = Pasteboard(name: "e", items: [], changeCount: 3, persistent: true)
        var saved = scheduler([board], storage: .saved)
        #expect(saved.expire(now: now) == [.expired(emptied), .record(emptied)])
        #expect(saved.expire(now: now) == [])
        var memory = scheduler([board])
        #expect(memory.expire(now: now) == [.expired(emptied)])
    }
}
