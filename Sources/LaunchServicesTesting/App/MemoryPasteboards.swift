/// The in-memory pasteboards an `AppDriver` serves the app's `AppPasteboard` calls from:
/// the daemon's own rules (`Pasteboards` in LaunchServicesCore: change counts, type
/// filtering, passwords, expiry) with a clock the test sets and no database.
import LaunchServicesCore

@MainActor
public final class MemoryPasteboards {
    /// The time the rules see, in Unix seconds; move it forward to expire items.
    public var now: UInt64
    /// Every request the app made, in order.
    public private(set) var requests: [PasteboardRequest] = []
    private var store: Pasteboards

    public init(now: UInt64 = 1_000_000_000, limits: PasteboardLimits = PasteboardLimits()) {
        self.now = now
        self.store = Pasteboards(limits: limits)
    }

    /// Applies one request as the daemon would; a refusal is thrown with the daemon's code
    /// and message (except that JSON items are not parsed).
    @discardableResult
    public func apply(_ request: PasteboardRequest) throws(PasteboardError) -> PasteboardSnapshot {
        let work = try store.passwordWork(for: request, now: now)
        guard let proof = work.perform(with: PlainPasswords()) else {
            throw PasteboardError(.unavailable, "the password could not be hashed")
        }
        return try store.apply(request, now: now, proof: proof).snapshot
    }

    /// Records and applies a request from the app.
    func serve(_ request: PasteboardRequest) throws(PasteboardError) -> PasteboardSnapshot {
        requests.append(request)
        return try apply(request)
    }

    /// Puts `text` on a pasteboard (`nil`: the general one), as another app would.
    @discardableResult
    public func copy(text: String, named name: String? = nil, password: String? = nil) throws(PasteboardError) -> UInt64 {
        try apply(PasteboardRequest(.copy, name: name, items: [PasteboardItem(text: text)], password: password)).changeCount
    }

    /// The items on a pasteboard now (expired ones gone), without a password check.
    public func items(named name: String? = nil) -> [PasteboardItem] {
        let board = store.boards[name ?? Pasteboards.general]
        if let expiresAt = board?.expiresAt, expiresAt <= now { return [] }
        return board?.items ?? []
    }

    /// The first text item on a pasteboard, or `nil`.
    public func text(named name: String? = nil) -> String? {
        items(named: name).first { PasteboardType.conforms($0.type, to: PasteboardType.text) }?.text
    }

    /// How many times a pasteboard changed (0 for one never used).
    public func changeCount(named name: String? = nil) -> UInt64 {
        store.boards[name ?? Pasteboards.general]?.changeCount ?? 0
    }
}

/// A stand-in for the daemon's Argon2id: the verifier is the password with a prefix. Fine
/// for tests in memory, never for anything stored.
struct PlainPasswords: PasswordHasher {
    func verifier(for password: String) -> String? { "plain:" + password }
    func password(_ password: String, matches verifier: String) -> Bool { verifier == "plain:" + password }
}
