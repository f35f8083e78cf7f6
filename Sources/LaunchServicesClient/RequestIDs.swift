import LaunchServicesProtocol

/// The request ids of one connection: 1, 2, … wrapping past `UInt32.max` back to 1, never 0
/// (id 0 marks one-way and connection-level messages).
public struct RequestIDs: Sendable {
    /// The id the next request will get.
    public private(set) var next: UInt32 = 1

    /// Starts at `next` (not 0; a test starts near the top to see the wrap).
    public init(next: UInt32 = 1) {
        self.next = next == 0 ? 1 : next
    }

    public mutating func take() -> UInt32 {
        defer {
            next &+= 1
            if next == 0 { next = 1 }
        }
        return next
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
