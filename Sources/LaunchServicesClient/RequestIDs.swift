import LaunchServicesCore
import LaunchServicesProtocol

/// The request ids of one connection: 1, 2, … wrapping past `UInt32.max` back to 1, never 0
/// (id 0 marks one-way and connection-level messages). The daemon numbers its own requests
/// to apps the same way, so both count with `LaunchToken.Counter`.
public struct RequestIDs: Sendable {
    private var counter: LaunchToken.Counter

    /// The id the next request will get.
    public var next: UInt32 { counter.next.value }

    /// Starts at `next` (not 0; a test starts near the top to see the wrap).
    public init(next: UInt32 = 1) {
        counter = LaunchToken.Counter(next: LaunchToken(requestID: next) ?? .first)
    }

    public mutating func take() -> UInt32 {
        counter.take().value
    }
}

/// Frames that arrived while a caller waited for a particular reply, kept in order for
/// later, up to a limit: a daemon that floods a waiting client is a protocol violation,
/// not a reason to grow without bound.
public struct SetAsideFrames {
    public let maximum: Int
    private var frames: [Envelope] = []

    public init(maximum: Int) { self.maximum = maximum }

    public var isEmpty: Bool { frames.isEmpty }

    public mutating func append(_ envelope: Envelope) throws(ClientError) {
        guard frames.count < maximum else { throw .protocolViolation("the daemon sent more than \(maximum) frames while a reply was awaited") }
        frames.append(envelope)
    }

    public mutating func removeFirst() -> Envelope? {
        frames.isEmpty ? nil : frames.removeFirst()
    }
}
