/// One pasteboard: its items, change count and the rules its writer set.
public struct Pasteboard: Sendable, Equatable {
    public var name: String
    public var items: [PasteboardItem]
    /// Goes up by one with every change (copy, clear, expiry), like `UIPasteboard.changeCount`.
    public var changeCount: UInt64
    /// Unix time (seconds) after which the items are gone; `nil` keeps them.
    public var expiresAt: UInt64?
    /// Kept across daemon restarts (in SQLite) when true.
    public var persistent: Bool
    /// When set, reading, replacing or clearing the items needs the password it was made
    /// from (x-sadun-services' paste service; docs/BEHAVIOUR.md §8). A salted slow hash
    /// (`PasswordHasher`), never the password itself, so neither memory nor
    /// `pasteboard.sqlite` gives it away.
    public var passwordVerifier: String?

    public init(name: String, items: [PasteboardItem] = [], changeCount: UInt64 = 0, expiresAt: UInt64? = nil, persistent: Bool = false, passwordVerifier: String? = nil) {
        self.name = name
        self.items = items
        self.changeCount = changeCount
        self.expiresAt = expiresAt
        self.persistent = persistent
        self.passwordVerifier = passwordVerifier
    }

    /// Reading, replacing or clearing needs the password.
    public var isProtected: Bool { passwordVerifier != nil && !items.isEmpty }

    public var byteCount: Int { items.reduce(0) { $0 + $1.data.count + $1.type.utf8.count } }
}

/// What a pasteboard request asks: copy (replace the items), paste (read them) or clear.
public struct PasteboardRequest: Sendable, Equatable {
    public enum Operation: String, Sendable, CaseIterable {
        case copy, paste, clear
    }

    public var operation: Operation
    /// `nil` means the general pasteboard.
    public var name: String?
    /// For copy: the new items.
    public var items: [PasteboardItem]
    /// For paste: only items conforming to this type.
    public var type: String?
    public var password: String?
    /// For copy: the items expire this many seconds from now.
    public var expireSeconds: UInt64?
    /// For copy: keep the pasteboard across daemon restarts.
    public var persistent: Bool

    public init(_ operation: Operation, name: String? = nil, items: [PasteboardItem] = [], type: String? = nil, password: String? = nil, expireSeconds: UInt64? = nil, persistent: Bool = false) {
        self.operation = operation
        self.name = name
        self.items = items
        self.type = type
        self.password = password
        self.expireSeconds = expireSeconds
        self.persistent = persistent
    }
}

/// What a pasteboard request returns: the pasteboard after it (for paste, the matching items).
public struct PasteboardSnapshot: Sendable, Equatable {
    public var name: String
    public var changeCount: UInt64
    public var items: [PasteboardItem]
    /// Seconds left before the items expire.
    public var expiresInSeconds: UInt64?
    public var persistent: Bool
    public var passwordProtected: Bool

    public init(name: String, changeCount: UInt64, items: [PasteboardItem], expiresInSeconds: UInt64? = nil, persistent: Bool = false, passwordProtected: Bool = false) {
        self.name = name
        self.changeCount = changeCount
        self.items = items
        self.expiresInSeconds = expiresInSeconds
        self.persistent = persistent
        self.passwordProtected = passwordProtected
    }
}

/// How much the pasteboards may hold; every buffer has a limit.
public struct PasteboardLimits: Sendable, Equatable, Codable {
    /// Bytes on one pasteboard (data and type names).
    public var maximumBytes: Int
    /// Bytes on all pasteboards together.
    public var maximumTotalBytes: Int
    /// Pasteboards holding items at once.
    public var maximumPasteboards: Int
    public var maximumItems: Int
    /// The longest expiry a writer may set.
    public var maximumExpirySeconds: UInt64

    /// Pasteboard requests one connection may have waiting or in progress (a password check
    /// or a wrong-password delay holds the ones behind it); past it, `unavailable`.
    public var maximumOperationsPerConnection: Int
    /// Password hashes and checks waiting for the daemon's one hashing thread; past it,
    /// `unavailable`. Each costs tens of milliseconds, so this bounds the wait too.
    public var maximumPasswordChecksWaiting: Int

    public init(maximumBytes: Int = 900 * 1024, maximumTotalBytes: Int = 64 * 1024 * 1024, maximumPasteboards: Int = 256, maximumItems: Int = 32, maximumExpirySeconds: UInt64 = 30 * 24 * 3600,
                maximumOperationsPerConnection: Int = 16, maximumPasswordChecksWaiting: Int = 32) {
        self.maximumBytes = maximumBytes
        self.maximumTotalBytes = maximumTotalBytes
        self.maximumPasteboards = maximumPasteboards
        self.maximumItems = maximumItems
        self.maximumExpirySeconds = maximumExpirySeconds
        self.maximumOperationsPerConnection = maximumOperationsPerConnection
        self.maximumPasswordChecksWaiting = maximumPasswordChecksWaiting
    }
}

/// A refused pasteboard request: `notPermitted` for a missing or wrong password,
/// `invalidRequest` for everything else, with a message naming the pasteboard and the fix.
public struct PasteboardError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: OpenErrorCode
    public var message: String
    public init(_ code: OpenErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// Every pasteboard the daemon holds, and the rules of using them. Pure: time comes in as
/// `now` (Unix seconds); the daemon persists what `persistent` boards become.
public struct Pasteboards: Sendable {
    public static let general = "general"
    public static let maximumNameLength = 128

    public private(set) var boards: [String: Pasteboard] = [:]
    public var limits: PasteboardLimits

    public init(limits: PasteboardLimits = PasteboardLimits(), restoring saved: [Pasteboard] = []) {
        self.limits = limits
        for board in saved { boards[board.name] = board }
    }

    /// Why `name` cannot name a pasteboard, or `nil`.
    public static func problem(withName name: String) -> String? {
        if name.isEmpty { return "the pasteboard name is empty; leave --name out for the general pasteboard" }
        if name.utf8.count > maximumNameLength { return "the pasteboard name '\(name.prefix(40))…' is longer than \(maximumNameLength) bytes" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "the pasteboard name \(JSONText.quote(name)) contains a control character"
        }
        return nil
    }

    /// Puts a pasteboard back as it was (`nil`: it did not exist), after a change to it could
    /// not be saved.
    public mutating func restore(_ board: Pasteboard?, named name: String) {
        boards[name] = board
    }

    /// Applies a request. Returns the snapshot to answer with and the pasteboard as it now
    /// is (for the store), or throws a named refusal; a refused request changes nothing.
    /// `proof` is what `passwordWork(for:now:)` asked for, done: a protected pasteboard needs
    /// `.matches` with its own verifier, and a copy that sets a password needs `.matches`
    /// with the verifier to keep.
    public mutating func apply(_ request: PasteboardRequest, now: UInt64, proof: PasswordProof = .none) throws(PasteboardError) -> (snapshot: PasteboardSnapshot, changed: Pasteboard?) {
        let name = request.name ?? Self.general
        if let problem = Self.problem(withName: name) { throw PasteboardError(.invalidRequest, problem) }
        var changed: Pasteboard?
        if let expired = expire(name, now: now) { changed = expired }
        var board = boards[name] ?? Pasteboard(name: name)
        if board.isProtected, let verifier = board.passwordVerifier {
            guard Self.password(of: request) != nil else { throw Self.passwordMissing(name, request.operation) }
            switch proof {
            case .matches(let proven) where proven == verifier: break
            case .wrong: throw PasteboardError(.notPermitted, "wrong password for pasteboard '\(name)'")
            default: throw PasteboardError(.unavailable, "the password for pasteboard '\(name)' was not checked against its current password; try again")
            }
        }
        switch request.operation {
        case .paste:
            var items = board.items
            if let type = request.type {
                if let problem = PasteboardType.problem(with: type) { throw PasteboardError(.invalidRequest, problem) }
                items = items.filter { PasteboardType.conforms($0.type, to: type) }
                if items.isEmpty && !board.items.isEmpty {
                    let held = Set(board.items.map(\.type)).sorted().joined(separator: ", ")
                    throw PasteboardError(.invalidRequest, "pasteboard '\(name)' has no item of type \(type); it holds \(held)")
                }
            }
            return (snapshot(board, items: items, now: now), changed)
        case .clear:
            if board.items.isEmpty && board.changeCount == 0 { return (snapshot(board, items: [], now: now), changed) }
            board.items = []
            board.changeCount += 1
            board.passwordVerifier = nil
            board.expiresAt = nil
            boards[name] = board
            pruneEmpty(keeping: name)
            return (snapshot(board, items: [], now: now), board)
        case .copy:
            try validate(request, name: name)
            board.passwordVerifier = nil
            if Self.password(of: request) != nil {
                // The password unlocked the old items (its verifier) or was hashed for these.
                guard case .matches(let verifier) = proof else {
                    throw PasteboardError(.unavailable, "the password for pasteboard '\(name)' was not hashed; try again")
                }
                board.passwordVerifier = verifier
            }
            board.items = request.items
            board.changeCount += 1
            board.persistent = request.persistent
            board.expiresAt = request.expireSeconds.map { now + $0 }
            boards[name] = board
            return (snapshot(board, items: board.items, now: now), board)
        }
    }

    func validate(_ request: PasteboardRequest, name: String) throws(PasteboardError) {
        guard !request.items.isEmpty else {
            throw PasteboardError(.invalidRequest, "nothing to copy to pasteboard '\(name)': give at least one item (use clear to empty it)")
        }
        guard request.items.count <= limits.maximumItems else {
            throw PasteboardError(.invalidRequest, "\(request.items.count) items for pasteboard '\(name)'; at most \(limits.maximumItems) are allowed")
        }
        for item in request.items {
            if let problem = PasteboardType.problem(with: item.type) { throw PasteboardError(.invalidRequest, problem) }
            if PasteboardType.conforms(item.type, to: PasteboardType.text), item.text == nil {
                throw PasteboardError(.invalidRequest, "the \(item.type) item for pasteboard '\(name)' is not valid UTF-8; copy binary data as \(PasteboardType.data)")
            }
        }
        let bytes = request.items.reduce(0) { $0 + $1.data.count + $1.type.utf8.count }
        guard bytes <= limits.maximumBytes else {
            throw PasteboardError(.invalidRequest, "pasteboard '\(name)' would hold \(bytes) bytes; the limit is \(limits.maximumBytes) (pasteboard.maximumBytes in launchservicesd.json)")
        }
        let others = boards.values.filter { $0.name != name && !$0.items.isEmpty }
        guard others.count < limits.maximumPasteboards else {
            throw PasteboardError(.invalidRequest, "\(others.count) pasteboards already hold items, the limit (pasteboard.maximumPasteboards); clear one first (lsctl pasteboard list)")
        }
        let total = others.reduce(bytes) { $0 + $1.byteCount }
        guard total <= limits.maximumTotalBytes else {
            throw PasteboardError(.invalidRequest, "all pasteboards together would hold \(total) bytes; the limit is \(limits.maximumTotalBytes) (pasteboard.maximumTotalBytes); clear some first")
        }
        if let seconds = request.expireSeconds {
            guard seconds > 0, seconds <= limits.maximumExpirySeconds else {
                throw PasteboardError(.invalidRequest, "expiry of \(seconds) s for pasteboard '\(name)' is out of range; give 1 to \(limits.maximumExpirySeconds) seconds")
            }
        }
    }

    /// Empties every pasteboard whose items expired; returns them (for the store).
    public mutating func expireAll(now: UInt64) -> [Pasteboard] {
        let expired = boards.keys.sorted().compactMap { expire($0, now: now) }
        if let last = expired.last { pruneEmpty(keeping: last.name) }
        return expired
    }

    private mutating func expire(_ name: String, now: UInt64) -> Pasteboard? {
        guard let board = boards[name], let expired = Self.expired(board, now: now) else { return nil }
        boards[name] = expired
        return expired
    }

    /// `board` emptied, when its items expired by `now`; else `nil`.
    static func expired(_ board: Pasteboard, now: UInt64) -> Pasteboard? {
        guard let expiresAt = board.expiresAt, expiresAt <= now, !board.items.isEmpty else { return nil }
        var board = board
        board.items = []
        board.changeCount += 1
        board.passwordVerifier = nil
        board.expiresAt = nil
        return board
    }

    /// Empty pasteboards are kept for their change count, but not without bound: past twice
    /// the pasteboard limit, the empty ones (except `name`) are forgotten.
    private mutating func pruneEmpty(keeping name: String) {
        guard boards.count > limits.maximumPasteboards * 2 else { return }
        boards = boards.filter { !$0.value.items.isEmpty || $0.key == name }
    }

    /// Every pasteboard that holds items or has changed, by name, without their contents.
    public func list(now: UInt64) -> [PasteboardSnapshot] {
        boards.values.sorted { $0.name < $1.name }.map { snapshot($0, items: $0.items, now: now) }
    }

    private func snapshot(_ board: Pasteboard, items: [PasteboardItem], now: UInt64) -> PasteboardSnapshot {
        PasteboardSnapshot(name: board.name, changeCount: board.changeCount, items: items,
                           expiresInSeconds: board.expiresAt.map { $0 > now ? $0 - now : 0 },
                           persistent: board.persistent, passwordProtected: board.isProtected)
    }
}
