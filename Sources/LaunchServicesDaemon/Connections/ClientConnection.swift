import LaunchServicesCore
import LaunchServicesProtocol
import NIOConcurrencyHelpers
import NIOCore

/// One peer of the daemon, on the loop: a tool on the socket, or an app on the socketpair
/// the daemon handed it. Used only on the daemon's loop, so not `Sendable`: a closure that
/// leaves the loop carries it in `NIOLoopBound`.
final class ClientConnection {
    enum Kind: Equatable {
        /// Connected to the listening socket.
        case socket
        /// The daemon's end of a launched app's fd 3; the bundle id comes from the launch.
        case app(String)
    }

    let channel: Channel
    /// A number unique to this connection in the daemon's life: the caller key that opens
    /// queued for one app take turns by.
    let serial: UInt64
    private static let counter = NIOLockedValueBox<UInt64>(0)
    /// `.socket` until an app started by hand declares itself and becomes `.app`.
    var kind: Kind
    /// The `sourceApplication` for this peer's opens, decided by the daemon.
    var identity: String
    var greeted = false
    /// Peer process id from SO_PEERCRED (socket peers).
    var peerPID: Int32?
    /// Whose connection shares this socket connection counts against, fixed when it
    /// opened (a later check-in changes `kind`, not the count); nil for apps' launch connections.
    var holder: ConnectionShares.Holder?
    /// Request tokens this peer still waits on, so a disconnect can drop them.
    var waiting: Set<LaunchToken> = []
    /// A pasteboard request of this peer waits or is under way (kept by `PasteboardService`).
    var awaitsPasteboard = false
    /// Callback tokens this peer reserved (`awaitCallback`), dropped when it disconnects.
    var reservations: Set<String> = []
    /// The peer shut down its sending side: close once its opens are answered.
    var finishedSending = false
    /// A last `failure` was sent; whatever else arrives is discarded.
    var closing = false
    /// Closes the connection if no `hello` arrives in time; cancelled by the hello.
    var helloDeadline: Scheduled<Void>?
    /// A socket peer that descends from an app the daemon runs: it speaks as that app and
    /// may not check in as any other.
    var descendsFromApp = false
    /// A hand-started app's check-in is being verified off the loop; no request is taken.
    var checkingIn = false
    /// Disconnected for leaving too many reply bytes unread; nothing more is written.
    var overflowed = false
    /// An in-process peer (a D-Bus caller, `DBusCaller`) takes what the daemon sends it as
    /// values, not bytes: `ConnectionTable.send` hands each envelope here instead of encoding
    /// it into the channel. Its channel still stands for the connection (its identity, its
    /// refusals, its close).
    var receive: ((Envelope) -> Void)?
    /// How the peer reached the daemon when not over the socket, for `lsctl history`:
    /// `dbus SENDER pid PID` for a D-Bus caller.
    var via: String?

    init(channel: Channel, kind: Kind, identity: String) {
        self.channel = channel
        serial = Self.counter.withLockedValue { $0 += 1; return $0 }
        self.kind = kind
        self.identity = identity
    }

    var appID: String? {
        if case .app(let id) = kind { return id }
        return nil
    }
}
