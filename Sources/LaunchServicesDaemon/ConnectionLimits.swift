/// What one peer may make the daemon hold. Each is at least as strict as dbus-daemon's
/// session-bus default for the same resource, and each, when reached, is a named error
/// the peer reads (or, for a peer that does not read, a logged disconnect).
public struct ConnectionLimits: Sendable, Equatable {
    /// Socket connections one uid may hold at once (dbus-daemon: 256). Apps' launch
    /// connections are not counted: the daemon makes those itself, one per app.
    public var maximumPerUser = 256
    /// How long a new connection may stay silent before its `hello` (dbus-daemon: 30 s to
    /// authenticate). Real clients say hello in their first write.
    public var firstMessageTimeout: Duration = .seconds(10)
    /// Opens one connection may have waiting for an answer (dbus-daemon: 128 pending
    /// replies per connection). Per connection, not per app, so one caller's flood cannot
    /// use up another caller's share.
    public var maximumPendingRequests = 128
    /// Callback addresses (`lsopen --wait`) one connection may hold at once.
    public var maximumCallbackAddresses = 16
    /// Reply bytes queued for a peer that does not read them (dbus-daemon: 127 MiB). Above
    /// `stopReadingAboveBytes` the daemon stops reading that peer's requests; past this cap
    /// the peer is disconnected.
    public var maximumQueuedOutputBytes = 64 << 20
    /// Where the daemon stops reading a peer until it drains its replies (not configurable:
    /// it only paces a fast peer, it refuses nothing).
    public static let stopReadingAboveBytes = 1 << 20

    public init() {}

    static let keys: Set<String> = ["maximumPerUser", "firstMessageSeconds", "maximumPendingRequests", "maximumCallbackAddresses", "maximumQueuedOutputBytes"]

    static func load(_ file: DaemonConfiguration.File.Connections, over defaults: ConnectionLimits, path: String) throws -> ConnectionLimits {
        func count(_ value: Int?, _ key: String, _ range: ClosedRange<Int>, _ fallback: Int) throws -> Int {
            guard let value else { return fallback }
            guard range.contains(value) else { throw ConfigurationError(path: path, problem: "connections.\(key) is \(value); give \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        var limits = defaults
        limits.maximumPerUser = try count(file.maximumPerUser, "maximumPerUser", 1...100_000, limits.maximumPerUser)
        limits.maximumPendingRequests = try count(file.maximumPendingRequests, "maximumPendingRequests", 1...10_000, limits.maximumPendingRequests)
        limits.maximumCallbackAddresses = try count(file.maximumCallbackAddresses, "maximumCallbackAddresses", 1...10_000, limits.maximumCallbackAddresses)
        limits.maximumQueuedOutputBytes = try count(file.maximumQueuedOutputBytes, "maximumQueuedOutputBytes", (2 << 20)...(1 << 32), limits.maximumQueuedOutputBytes)
        if let seconds = file.firstMessageSeconds {
            guard seconds > 0, seconds <= 240 else { throw ConfigurationError(path: path, problem: "connections.firstMessageSeconds is \(seconds); give seconds between 0 and 240") }
            limits.firstMessageTimeout = .milliseconds(Int64(seconds * 1000))
        }
        return limits
    }
}
