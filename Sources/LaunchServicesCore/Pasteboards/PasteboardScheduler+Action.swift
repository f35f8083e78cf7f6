/// The scheduler's vocabulary: who asks (`Peer`), which piece of work an event is about
/// (`Token`), where changes are kept (`Storage`), and what it asks the daemon to do
/// (`Action`, answering with a `Reply`).
extension PasteboardScheduler {
    /// A connection, by the number the daemon gave it: never reused in the daemon's life, so
    /// a peer that reconnects starts with nothing of its old connection's.
    public struct Peer: Hashable, Sendable, CustomStringConvertible {
        public let serial: UInt64
        public init(_ serial: UInt64) { self.serial = serial }
        public var description: String { "peer \(serial)" }
    }

    /// One piece of work under way: a password check, a save, or a wrong password's delay.
    /// The event that reports its end carries it; an event whose token names no work at that
    /// stage (already over, never issued) changes nothing.
    public struct Token: Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
        public let value: UInt64
        public init(_ value: UInt64) { self.value = value }
        public init(integerLiteral value: UInt64) { self.value = value }
        public var description: String { "token \(value)" }
    }

    /// Where changed pasteboards are kept.
    public enum Storage: Sendable, Equatable {
        /// No state folder: everything stays in memory, `persistent` lasts the daemon's life.
        case memory
        /// Every change is saved (`save`) before it is answered, the pasteboard held meanwhile.
        case saved
        /// The store could not be opened: a copy that should be kept is refused, naming
        /// `reason`, rather than silently not kept.
        case unavailable(reason: String)
    }

    /// How a request is answered.
    public enum Reply: Sendable, Equatable {
        /// Applied: the pasteboard after it (for a paste, the matching items).
        case applied(PasteboardSnapshot)
        /// Refused by the pasteboard rules: a bad name, a missing or wrong password, an
        /// invalid copy, a kept copy that cannot be kept. The daemon logs these.
        case refused(PasteboardError)
        /// Refused by a limit of the scheduling itself, before any work (`unavailable`, naming
        /// the limit). Not logged: a peer past its limit could otherwise flood the log.
        case busy(PasteboardError)
        /// The work could not be done (the hash or the save failed); nothing was changed. The
        /// daemon logged the cause when the work came back.
        case failed(PasteboardError)
    }

    public enum Action: Sendable, Equatable {
        /// Answer `peer`'s request `id` (a `operation` request) with `reply`.
        case answer(Peer, id: UInt32, PasteboardRequest.Operation, Reply)
        /// Do `work` off the event loop (a hash costs tens of ms and 19 MiB), one at a time,
        /// and report `passwordChecked(token, proof:now:)`.
        case checkPassword(Token, PasswordWork)
        /// Report `delayOver(token, now:)` after `after`.
        case armDelay(Token, after: Duration)
        /// Write `board` to the store (off the loop) and report `saveFinished(token, error:now:)`.
        case save(Token, Pasteboard)
        /// Write `board` to the store without waiting: an expiry, which the next start redoes
        /// if the write fails.
        case record(Pasteboard)
        /// `board`'s items expired (for the log).
        case expired(Pasteboard)
        /// `peer`'s requests that had to wait are all answered and nothing else waits: a
        /// connection whose peer finished sending may close now.
        case released(Peer)
    }
}
