import LaunchServicesCore
import Testing

/// A stand-in for the daemon's Argon2id hasher: a verifier carries a salt, so two verifiers of
/// one password differ, and it can be told to fail.
struct StandInHasher: PasswordHasher {
    var fails = false
    func verifier(for password: String) -> String? {
        fails ? nil : "standin$\(UInt32.random(in: 0...UInt32.max))$\(String(password.reversed()))"
    }
    func password(_ password: String, matches verifier: String) -> Bool {
        verifier.split(separator: "$").last.map(String.init) == String(password.reversed())
    }
}

/// Pasteboard passwords: what work a request needs, and what `apply` accepts as proof.
@Suite("Pasteboard password rules")
struct PasteboardPasswordRulesTests {
    let hasher = StandInHasher()
    func text(_ s: String) -> [PasteboardItem] { [PasteboardItem(text: s)] }

    /// What the daemon does: the work (off its loop), then the rules.
    @discardableResult
    func run(_ boards: inout Pasteboards, _ request: PasteboardRequest, now: UInt64 = 0) throws(PasteboardError) -> PasteboardSnapshot {
        let work = try boards.passwordWork(for: request, now: now)
        guard let proof = work.perform(with: hasher) else { throw PasteboardError(.unavailable, "hasher failed") }
        return try boards.apply(request, now: now, proof: proof).snapshot
    }

    @Test("a password guards reading, replacing and clearing, and goes with the items")
    func guards() throws {
        var boards = Pasteboards()
        try run(&boards, PasteboardRequest(.copy, name: "s", items: text("secret"), password: "pw"))
        for request in [PasteboardRequest(.paste, name: "s"), PasteboardRequest(.copy, name: "s", items: text("x")), PasteboardRequest(.clear, name: "s"), PasteboardRequest(.paste, name: "s", password: "")] {
            let error = #expect(throws: PasteboardError.self) { try run(&boards, request) }
            #expect(error?.code == .notPermitted)
            #expect(error?.message.contains("protected by a password") == true)
        }
        #expect(throws: PasteboardError(.notPermitted, "wrong password for pasteboard 's'")) { try run(&boards, PasteboardRequest(.paste, name: "s", password: "pW")) }
        let snapshot = try run(&boards, PasteboardRequest(.paste, name: "s", password: "pw"))
        #expect(snapshot.items == text("secret"))
        #expect(snapshot.passwordProtected)
        try run(&boards, PasteboardRequest(.clear, name: "s", password: "pw"))
        try run(&boards, PasteboardRequest(.copy, name: "s", items: text("open")))
        #expect(try run(&boards, PasteboardRequest(.paste, name: "s")).passwordProtected == false)
    }

    @Test("the pasteboard keeps the hasher's verifier, never the password")
    func keepsVerifier() throws {
        var boards = Pasteboards()
        try run(&boards, PasteboardRequest(.copy, name: "s", items: text("x"), password: "hunter2"))
        let verifier = try #require(boards.boards["s"]?.passwordVerifier)
        #expect(verifier.hasPrefix("standin$"))
        #expect(!verifier.contains("hunter2"))
        // Replacing the items with the right password keeps the verifier: nothing to rehash.
        try run(&boards, PasteboardRequest(.copy, name: "s", items: text("y"), password: "hunter2"))
        #expect(boards.boards["s"]?.passwordVerifier == verifier)
    }

    @Test("requests without a password need no work, so the daemon answers them on its loop")
    func noWork() throws {
        var boards = Pasteboards()
        #expect(try boards.passwordWork(for: PasteboardRequest(.copy, items: text("a")), now: 0) == .none)
        try run(&boards, PasteboardRequest(.copy, items: text("a")))
        #expect(try boards.passwordWork(for: PasteboardRequest(.paste), now: 0) == .none)
        #expect(try boards.passwordWork(for: PasteboardRequest(.paste, password: "ignored"), now: 0) == .none, "an unprotected pasteboard checks nothing")
        #expect(try boards.passwordWork(for: PasteboardRequest(.copy, items: text("b"), password: ""), now: 0) == .none, "an empty password is none")
        #expect(try boards.passwordWork(for: PasteboardRequest(.copy, items: text("b"), password: "pw"), now: 0) == .makeVerifier(password: "pw"))
        try run(&boards, PasteboardRequest(.copy, items: text("b"), password: "pw"))
        guard case .check(password: "guess", verifier: _) = try boards.passwordWork(for: PasteboardRequest(.paste, password: "guess"), now: 0) else {
            Issue.record("a protected pasteboard needs a check")
            return
        }
    }

    @Test("refusals that need no hash come before any work")
    func cheapRefusalsFirst() {
        var boards = Pasteboards(limits: PasteboardLimits(maximumItems: 1))
        for (request, code, words) in [
            (PasteboardRequest(.copy, name: "", items: text("x"), password: "pw"), OpenErrorCode.invalidRequest, "name is empty"),
            (PasteboardRequest(.copy, items: [], password: "pw"), .invalidRequest, "nothing to copy"),
            (PasteboardRequest(.copy, items: text("1") + text("2"), password: "pw"), .invalidRequest, "at most 1 are allowed"),
            (PasteboardRequest(.copy, items: text("x"), password: String(repeating: "p", count: 4097)), .invalidRequest, "longer than 4096 bytes"),
        ] {
            let error = #expect(throws: PasteboardError.self) { try boards.passwordWork(for: request, now: 0) }
            #expect(error?.code == code)
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "") should say \(words)")
        }
        _ = try? run(&boards, PasteboardRequest(.copy, items: text("s"), password: "pw"))
        let missing = #expect(throws: PasteboardError.self) { try boards.passwordWork(for: PasteboardRequest(.paste), now: 0) }
        #expect(missing?.code == .notPermitted, "a missing password is refused at once: nothing to guess")
    }

    @Test("apply refuses a protected pasteboard without the matching proof")
    func proofRequired() throws {
        var boards = Pasteboards()
        try run(&boards, PasteboardRequest(.copy, name: "s", items: text("x"), password: "pw"))
        let request = PasteboardRequest(.paste, name: "s", password: "pw")
        for proof in [PasswordProof.none, .matches(verifier: "standin$1$wp")] {
            let error = #expect(throws: PasteboardError.self) { try boards.apply(request, now: 0, proof: proof) }
            #expect(error?.code == .unavailable, "a proof for another verifier is no proof")
        }
        #expect(throws: PasteboardError(.notPermitted, "wrong password for pasteboard 's'")) { try boards.apply(request, now: 0, proof: .wrong) }
        let unhashed = #expect(throws: PasteboardError.self) { try boards.apply(PasteboardRequest(.copy, name: "t", items: text("x"), password: "pw"), now: 0) }
        #expect(unhashed?.code == .unavailable, "a copy that sets a password needs its verifier")
        #expect(boards.boards["t"] == nil)
    }

    @Test("a pasteboard that expires while its password is checked: the copy keeps the checked verifier")
    func expiresDuringCheck() throws {
        var boards = Pasteboards()
        try run(&boards, PasteboardRequest(.copy, name: "e", items: text("x"), password: "pw", expireSeconds: 10), now: 0)
        let copy = PasteboardRequest(.copy, name: "e", items: text("y"), password: "pw")
        let proof = try #require(try boards.passwordWork(for: copy, now: 9).perform(with: hasher))
        let snapshot = try boards.apply(copy, now: 10, proof: proof).snapshot
        #expect(snapshot.items == text("y"))
        #expect(snapshot.passwordProtected)
        #expect(throws: PasteboardError.self) { try run(&boards, PasteboardRequest(.paste, name: "e", password: "nope"), now: 10) }
        // After expiry nothing is protected: a paste needs no password and no work.
        try run(&boards, PasteboardRequest(.copy, name: "f", items: text("x"), password: "pw", expireSeconds: 5), now: 0)
        #expect(try boards.passwordWork(for: PasteboardRequest(.paste, name: "f"), now: 5) == .none)
    }

    @Test("a failing hasher is no proof")
    func hasherFails() throws {
        #expect(PasswordWork.makeVerifier(password: "pw").perform(with: StandInHasher(fails: true)) == nil)
        #expect(PasswordWork.none.perform(with: StandInHasher(fails: true)) == PasswordProof.none)
    }

    @Test("restored pasteboards keep their change count and verifier")
    func restoring() throws {
        let verifier = try #require(hasher.verifier(for: "pw"))
        var boards = Pasteboards(restoring: [Pasteboard(name: "k", items: text("v"), changeCount: 7, persistent: true, passwordVerifier: verifier)])
        #expect(throws: PasteboardError.self) { try run(&boards, PasteboardRequest(.paste, name: "k", password: "wrong")) }
        let snapshot = try run(&boards, PasteboardRequest(.copy, name: "k", items: text("w"), password: "pw", persistent: true))
        #expect(snapshot.changeCount == 8)
        #expect(snapshot.persistent)
    }
}
