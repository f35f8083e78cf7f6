import LaunchServicesCore
import Testing

/// What the scheduler tests share: peers, boards and the answers the rules give.
protocol PasteboardSchedulerFixtures {}

extension PasteboardSchedulerFixtures {
    typealias Peer = PasteboardScheduler.Peer
    typealias Action = PasteboardScheduler.Action

    var a: Peer { Peer(1) }
    var b: Peer { Peer(2) }
    var c: Peer { Peer(3) }
    var now: UInt64 { 1_000 }

    func text(_ s: String) -> [PasteboardItem] { [PasteboardItem(text: s)] }

    /// A pasteboard whose items need the password `right` (its verifier is `v-right`).
    func protected(_ name: String, _ content: String = "secret") -> Pasteboard {
        Pasteboard(name: name, items: text(content), changeCount: 1, passwordVerifier: "v-right")
    }

    func scheduler(_ boards: [Pasteboard] = [], limits: PasteboardLimits = PasteboardLimits(), storage: PasteboardScheduler.Storage = .memory) -> PasteboardScheduler {
        PasteboardScheduler(pasteboards: Pasteboards(limits: limits, restoring: boards), storage: storage)
    }

    func paste(_ name: String, _ password: String? = nil) -> PasteboardRequest { PasteboardRequest(.paste, name: name, password: password) }
    func copy(_ name: String, _ content: String, password: String? = nil, persistent: Bool = false) -> PasteboardRequest {
        PasteboardRequest(.copy, name: name, items: text(content), password: password, persistent: persistent)
    }

    func snapshot(_ name: String, change: UInt64, _ items: [PasteboardItem], protected: Bool = false, persistent: Bool = false) -> PasteboardSnapshot {
        PasteboardSnapshot(name: name, changeCount: change, items: items, persistent: persistent, passwordProtected: protected)
    }

    /// What the rules refuse `request` with before any password work, on `boards`.
    func refusal(_ request: PasteboardRequest, on boards: [Pasteboard]) -> PasteboardError {
        do {
            _ = try Pasteboards(restoring: boards).passwordWork(for: request, now: now)
        } catch {
            return error
        }
        Issue.record("the rules accepted \(request)")
        return PasteboardError(.invalidRequest, "")
    }

    var wrongAnswer: PasteboardScheduler.Reply {
        .refused(PasteboardError(.notPermitted, "wrong password for pasteboard 's'; answered after a 1 s delay, as every wrong password is"))
    }
}

/// `PasteboardScheduler` driven directly: each event in, the exact list of actions out. The
/// password work is never done here: the test reports what it would have found.
@Suite("PasteboardScheduler: lanes, held pasteboards, the wrong-password delay")
struct PasteboardSchedulerTests: PasteboardSchedulerFixtures {
    @Test("a request with no password work and nothing ahead is applied and answered in its own event")
    func immediate() {
        var s = scheduler()
        #expect(s.requested(copy("p", "one"), id: 1, from: a, now: now) == [.answer(a, id: 1, .copy, .applied(snapshot("p", change: 1, text("one"))))])
        #expect(s.requested(paste("p"), id: 2, from: a, now: now) == [.answer(a, id: 2, .paste, .applied(snapshot("p", change: 1, text("one"))))])
        #expect(s.isIdle(a))
        #expect(s.heldPasteboards.isEmpty)
    }

    @Test("one connection's requests are applied in order, one at a time: a paste behind a copy with a password sees the copy")
    func laneOrder() {
        var s = scheduler()
        #expect(s.requested(copy("o", "first", password: "pw"), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "pw"))])
        #expect(s.heldPasteboards == ["o"])
        // All wait behind the copy, the one for another pasteboard too: order is per connection.
        #expect(s.requested(paste("o", "pw"), id: 2, from: a, now: now) == [])
        #expect(s.requested(paste("o"), id: 3, from: a, now: now) == [])
        #expect(s.requested(copy("other", "x"), id: 4, from: a, now: now) == [])
        #expect(!s.isIdle(a))

        let copied = snapshot("o", change: 1, text("first"), protected: true)
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v1"), now: now) == [
            .answer(a, id: 1, .copy, .applied(copied)),
            .checkPassword(2, .check(password: "pw", verifier: "v1")),
        ])
        #expect(s.passwordChecked(2, proof: .matches(verifier: "v1"), now: now) == [
            .answer(a, id: 2, .paste, .applied(copied)),
            .answer(a, id: 3, .paste, .refused(refusal(paste("o"), on: [Pasteboard(name: "o", items: text("first"), passwordVerifier: "v1")]))),
            .answer(a, id: 4, .copy, .applied(snapshot("other", change: 1, text("x")))),
            .released(a),
        ])
        #expect(s.isIdle(a))
        #expect(s.heldPasteboards.isEmpty)
        #expect(s.checksInProgress == 0)
    }

    @Test("two connections on different pasteboards do not wait for each other, and are answered as their work ends")
    func independentConnections() {
        var s = scheduler([Pasteboard(name: "y", items: text("why"), changeCount: 1)])
        #expect(s.requested(copy("x", "ex", password: "p1"), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "p1"))])
        #expect(s.requested(paste("y"), id: 1, from: b, now: now) == [.answer(b, id: 1, .paste, .applied(snapshot("y", change: 1, text("why"))))])
        #expect(s.requested(copy("y", "new", password: "p2"), id: 2, from: b, now: now) == [.checkPassword(2, .makeVerifier(password: "p2"))])
        #expect(s.heldPasteboards == ["x", "y"])
        #expect(s.checksInProgress == 2)
        // b's check ends first and b is answered first; a still waits for its own.
        #expect(s.passwordChecked(2, proof: .matches(verifier: "v2"), now: now) == [
            .answer(b, id: 2, .copy, .applied(snapshot("y", change: 2, text("new"), protected: true))),
            .released(b),
        ])
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v1"), now: now) == [
            .answer(a, id: 1, .copy, .applied(snapshot("x", change: 1, text("ex"), protected: true))),
            .released(a),
        ])
    }

    @Test("a pasteboard held for a password check makes another connection's request for it wait, while other pasteboards go on")
    func heldPasteboardWaits() {
        var s = scheduler([protected("s"), Pasteboard(name: "t", items: text("tee"), changeCount: 1)])
        #expect(s.requested(paste("s", "right"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "right", verifier: "v-right"))])
        #expect(s.requested(paste("s", "right"), id: 1, from: b, now: now) == [], "waits for the pasteboard")
        #expect(s.requested(paste("t"), id: 2, from: b, now: now) == [], "and b's next request waits behind it, in order")
        #expect(s.requested(paste("t"), id: 1, from: c, now: now) == [.answer(c, id: 1, .paste, .applied(snapshot("t", change: 1, text("tee"))))],
                "another connection on another pasteboard is not held up")
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v-right"), now: now) == [
            .answer(a, id: 1, .paste, .applied(snapshot("s", change: 1, text("secret"), protected: true))),
            // The pasteboard is handed to the first lane waiting for it.
            .checkPassword(2, .check(password: "right", verifier: "v-right")),
            .released(a),
        ])
        #expect(s.passwordChecked(2, proof: .matches(verifier: "v-right"), now: now) == [
            .answer(b, id: 1, .paste, .applied(snapshot("s", change: 1, text("secret"), protected: true))),
            .answer(b, id: 2, .paste, .applied(snapshot("t", change: 1, text("tee")))),
            .released(b),
        ])
    }

    @Test("a wrong password holds its connection and its pasteboard for the delay, then is answered and both go on")
    func wrongPasswordDelay() {
        var s = scheduler([protected("s"), Pasteboard(name: "t", items: text("tee"), changeCount: 1)])
        #expect(s.requested(paste("s", "guess"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "guess", verifier: "v-right"))])
        #expect(s.requested(paste("t"), id: 2, from: a, now: now) == [])
        #expect(s.requested(paste("s", "right"), id: 1, from: b, now: now) == [])
        #expect(s.passwordChecked(1, proof: .wrong, now: now) == [.armDelay(1, after: .seconds(1))], "not answered yet")
        #expect(s.heldPasteboards == ["s"])
        #expect(s.checksInProgress == 0, "the hashing thread is free; only the pasteboard and the connection wait")
        #expect(s.requested(paste("t"), id: 1, from: c, now: now) == [.answer(c, id: 1, .paste, .applied(snapshot("t", change: 1, text("tee"))))])
        #expect(s.delayOver(1, now: now + 1) == [
            .answer(a, id: 1, .paste, wrongAnswer),
            .checkPassword(2, .check(password: "right", verifier: "v-right")),
            .answer(a, id: 2, .paste, .applied(snapshot("t", change: 1, text("tee")))),
            .released(a),
        ])
        #expect(s.passwordChecked(2, proof: .matches(verifier: "v-right"), now: now + 1) == [
            .answer(b, id: 1, .paste, .applied(snapshot("s", change: 1, text("secret"), protected: true))),
            .released(b),
        ])
    }

    @Test("pipelined guesses on one connection are checked one after another, each after the last one's delay")
    func guessesInTurn() {
        var s = scheduler([protected("s")])
        #expect(s.requested(paste("s", "g1"), id: 1, from: a, now: now) == [.checkPassword(1, .check(password: "g1", verifier: "v-right"))])
        #expect(s.requested(paste("s", "g2"), id: 2, from: a, now: now) == [])
        #expect(s.passwordChecked(1, proof: .wrong, now: now) == [.armDelay(1, after: .seconds(1))])
        #expect(s.delayOver(1, now: now) == [.answer(a, id: 1, .paste, wrongAnswer), .checkPassword(2, .check(password: "g2", verifier: "v-right"))])
        #expect(s.passwordChecked(2, proof: .wrong, now: now) == [.armDelay(2, after: .seconds(1))])
        #expect(s.delayOver(2, now: now) == [.answer(a, id: 2, .paste, wrongAnswer), .released(a)])
    }

    @Test("a hash that fails is answered unavailable at once, with no delay and nothing changed")
    func hashFails() {
        var s = scheduler()
        #expect(s.requested(copy("k", "x", password: "pw"), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "pw"))])
        #expect(s.passwordChecked(1, proof: nil, now: now) == [
            .answer(a, id: 1, .copy, .failed(PasteboardError(.unavailable, "the password for pasteboard 'k' could not be hashed (out of memory?); nothing was changed"))),
            .released(a),
        ])
        #expect(s.pasteboards.boards["k"] == nil)
    }

    @Test("a content problem (the daemon's JSON check) refuses a copy in its turn, after its password work")
    func contentCheck() {
        let problem = PasteboardError(.invalidRequest, "not valid JSON")
        var s = PasteboardScheduler(contentCheck: { $0.operation == .copy && $0.items.first?.text == "{" ? problem : nil })
        #expect(s.requested(copy("j", "{", password: "pw"), id: 1, from: a, now: now) == [.checkPassword(1, .makeVerifier(password: "pw"))])
        #expect(s.passwordChecked(1, proof: .matches(verifier: "v"), now: now) == [.answer(a, id: 1, .copy, .refused(problem)), .released(a)])
        #expect(s.requested(copy("j", "{}"), id: 2, from: a, now: now) == [.answer(a, id: 2, .copy, .applied(snapshot("j", change: 1, text("{}"))))])
    }
}
