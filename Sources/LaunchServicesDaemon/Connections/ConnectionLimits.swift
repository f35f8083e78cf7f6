/// What one peer may make the daemon hold. Each is at least as strict as dbus-daemon's
/// session-bus default for the same resource, and each, when reached, is a named error
/// the peer reads (or, for a peer that does not read, a logged disconnect).
public struct ConnectionLimits: Sendable, Equatable {
    /// Socket connections one uid may hold at once (dbus-daemon: 256). Apps' launch
    /// connections are not counted: the daemon makes those itself, one per app.
    public var maximumPerUser = 256
    /// Socket connections one process (the peer pid, SO_PEERCRED) may hold: a quarter of the
    /// user's, so no one process — a runaway script, an app's forgotten child — can take the
    /// user's whole allowance. A tool holds one; an app's runtime one or two.
    public var maximumPerProcess = 64
    /// Socket connections one app and every process it started may hold together (orphans
    /// of apps count as one app): half the user's, so an app that floods from many processes
    /// still leaves the other half to the user and the other apps.
    public var maximumPerApp = 128
    /// The last connections of `maximumPerUser` that only a process holding none may take:
    /// when processes that already hold connections have filled the rest, the user's next
    /// `lsopen` or `lsctl` (a new process) still connects.
    public var reservedForFirstConnections = 16
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

    /// The shares when only `maximumPerUser` is given: a quarter per process, a half per app,
    /// a sixteenth kept for first connections (64, 128 and 16 of the default 256).
    static func shares(ofUser user: Int) -> (process: Int, app: Int, reserved: Int) {
        (max(1, user / 4), max(1, user / 2), user / 16)
    }

    static func load(_ file: DaemonConfiguration.File.Connections, over defaults: ConnectionLimits, path: String) throws -> ConnectionLimits {
        func count(_ value: Int?, _ key: String, _ range: ClosedRange<Int>, _ fallback: Int) throws -> Int {
            guard let value else { return fallback }
            guard range.contains(value) else { throw ConfigurationError(path: path, problem: "connections.\(key) is \(value); give \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        var limits = defaults
        limits.maximumPerUser = try count(file.maximumPerUser, "maximumPerUser", 1...100_000, limits.maximumPerUser)
        // The shares are parts of the user's allowance, so they follow it when not given.
        let scaled = file.maximumPerUser.map(shares(ofUser:)) ?? (process: limits.maximumPerProcess, app: limits.maximumPerApp, reserved: limits.reservedForFirstConnections)
        let user = limits.maximumPerUser
        limits.maximumPerProcess = try count(file.maximumPerProcess, "maximumPerProcess", 1...user, min(scaled.process, user))
        limits.maximumPerApp = try count(file.maximumPerApp, "maximumPerApp", 1...user, min(scaled.app, user))
        limits.reservedForFirstConnections = try count(file.reservedForFirstConnections, "reservedForFirstConnections", 0...(user - 1), min(scaled.reserved, user - 1))
        limits.maximumPendingRequests = try count(file.maximumPendingRequests, "maximumPendingRequests", 1...10_000, limits.maximumPendingRequests)
        limits.maximumCallbackAddresses = try count(file.maximumCallbackAddresses, "maximumCallbackAddresses", 1...10_000, limits.maximumCallbackAddresses)
        limits.maximumQueuedOutputBytes = try count(file.maximumQueuedOutputBytes, "maximumQueuedOutputBytes", (2 << 20)...(1 << 32), limits.maximumQueuedOutputBytes)
        if let seconds = file.firstMessageSeconds {
            limits.firstMessageTimeout = try DaemonConfiguration.File.seconds(seconds, key: "connections.firstMessageSeconds", upTo: 240, path: path)
        }
        return limits
    }
}
