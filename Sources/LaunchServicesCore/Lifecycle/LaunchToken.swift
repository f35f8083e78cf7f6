/// The name of one thing the daemon waits on: an open request awaiting its answer, a phase
/// of an open (its reply and its deadline), a background grace, a quit step. An event that
/// ends the wait carries the token; one whose token names nothing waiting any more is stale
/// and changes nothing.
///
/// A phase's token is the request id of the daemon's `launchMethod` or `deliver` frame
/// (PROTOCOL.md §4), so every token is a 32-bit id and never 0, which on the wire marks a
/// one-way message and answers nothing. "No token" is `nil`, never a number.
public struct LaunchToken: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// 1...UInt32.max: the request id the token travels as.
    public let value: UInt32

    /// The token a request id names, or nil for 0, which names none (a reply under id 0
    /// answers no request).
    public init?(requestID value: UInt32) {
        guard value != 0 else { return nil }
        self.value = value
    }

    /// A literal token, for tests and examples; 0 is not one.
    public init(integerLiteral value: UInt32) {
        precondition(value != 0, "0 is no token: it marks a one-way message on the wire")
        self.value = value
    }

    public static let first: LaunchToken = 1
    public static let last = LaunchToken(integerLiteral: .max)

    /// The token issued after this one: 1, 2, … `UInt32.max`, then 1 again, never 0. The
    /// only place the wrap-around is written.
    public var successor: LaunchToken {
        value == .max ? .first : LaunchToken(integerLiteral: value + 1)
    }

    /// Orders tokens by value, for a stable order; after a wrap that is not their age.
    public static func < (lhs: LaunchToken, rhs: LaunchToken) -> Bool { lhs.value < rhs.value }

    public var description: String { "\(value)" }

    /// Issues tokens in order, each one once until the counter wraps (4,294,967,295 later,
    /// far beyond anything a token waits for).
    public struct Counter: Sendable, Equatable {
        /// The token `take()` returns next.
        public private(set) var next: LaunchToken

        /// Starts at `next` (a test starts near `last` to see the wrap).
        public init(next: LaunchToken = .first) {
            self.next = next
        }

        public mutating func take() -> LaunchToken {
            defer { next = next.successor }
            return next
        }
    }
}
