/// Makes and checks password verifiers. The daemon's is Argon2id (a salted, memory-hard,
/// deliberately slow hash); the rules only need these two answers, so they stay pure and
/// tests use a stand-in.
public protocol PasswordHasher: Sendable {
    /// A salted verifier for `password`, or `nil` when none could be made (out of memory).
    func verifier(for password: String) -> String?
    /// Whether `password` is the one `verifier` was made from.
    func password(_ password: String, matches verifier: String) -> Bool
}

/// The slow part of a pasteboard request: what must be hashed or checked before the rules
/// can decide. The daemon does it off its event loop, then calls `Pasteboards.apply`.
public enum PasswordWork: Sendable, Equatable {
    /// Nothing: the pasteboard is not protected and the request sets no password.
    case none
    /// A copy sets a password on an unprotected pasteboard: make a verifier for it.
    case makeVerifier(password: String)
    /// The pasteboard is protected: check the given password against its verifier.
    case check(password: String, verifier: String)

    /// Does the work. `nil` when the hasher failed (the request should be refused as
    /// `unavailable`, not as a wrong password).
    public func perform(with hasher: some PasswordHasher) -> PasswordProof? {
        switch self {
        case .none: return PasswordProof.none
        case .makeVerifier(let password): return hasher.verifier(for: password).map { .matches(verifier: $0) }
        case .check(let password, let verifier): return hasher.password(password, matches: verifier) ? .matches(verifier: verifier) : .wrong
        }
    }
}

/// What `PasswordWork` found, handed to `Pasteboards.apply`.
public enum PasswordProof: Sendable, Equatable {
    /// No password was involved.
    case none
    /// The request's password matches this verifier: a fresh one, or the pasteboard's own.
    case matches(verifier: String)
    /// The request's password is not the pasteboard's.
    case wrong
}

extension Pasteboards {
    /// Longer passwords are refused: every buffer has a limit, and `lsctl --password-file`
    /// reads at most this much.
    public static let maximumPasswordLength = 4096

    /// The password work `request` needs before `apply`. Refusals that need no hash (a bad
    /// name, a missing or overlong password, an invalid copy) are thrown here, so a request
    /// that would be refused anyway costs no hashing. Changes nothing: `apply` decides later,
    /// against the pasteboard as it is then.
    public func passwordWork(for request: PasteboardRequest, now: UInt64) throws(PasteboardError) -> PasswordWork {
        let name = request.name ?? Self.general
        if let problem = Self.problem(withName: name) { throw PasteboardError(.invalidRequest, problem) }
        let password = Self.password(of: request)
        if let password, password.utf8.count > Self.maximumPasswordLength {
            throw PasteboardError(.invalidRequest, "the password for pasteboard '\(name)' is longer than \(Self.maximumPasswordLength) bytes")
        }
        var board = boards[name] ?? Pasteboard(name: name)
        if let expired = Self.expired(board, now: now) { board = expired }
        if request.operation == .copy { try validate(request, name: name) }
        if board.isProtected, let verifier = board.passwordVerifier {
            guard let password else { throw Self.passwordMissing(name, request.operation) }
            return .check(password: password, verifier: verifier)
        }
        if request.operation == .copy, let password { return .makeVerifier(password: password) }
        return .none
    }

    /// The request's password; an empty one counts as none.
    static func password(of request: PasteboardRequest) -> String? {
        guard let password = request.password, !password.isEmpty else { return nil }
        return password
    }

    /// Names the command that would have worked, verb included (`lsctl pasteboard paste
    /// --name N --password …`), and the ways to keep the password out of `ps`.
    static func passwordMissing(_ name: String, _ operation: PasteboardRequest.Operation) -> PasteboardError {
        let selection = name == general ? "" : " --name \(shellWord(name))"
        return PasteboardError(.notPermitted, "pasteboard \(TerminalText.quoted(name)) is protected by a password; pass it: lsctl pasteboard \(operation.rawValue)\(selection) --password … (or --password-file FILE, or $LSCTL_PASTEBOARD_PASSWORD); apps pass it to application.pasteboard(named:), the paste service as password=")
    }

    /// `word` as one shell word: bare when it is plainly safe, else in single quotes.
    static func shellWord(_ word: String) -> String {
        let safe = !word.isEmpty && word.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-+/:@%".unicodeScalars.contains($0)) }
        if safe { return word }
        return "'" + TerminalText.escapingControls(word).replacing("'", with: "'\\''") + "'"
    }
}
