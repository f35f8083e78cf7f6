import Logging
import NIOCore

/// The limits a peer can run into, each named in the log and in the peer's error.
enum PeerLimit: String, Sendable {
    case connectionsPerUser = "connections.maximumPerUser"
    case connectionsPerProcess = "connections.maximumPerProcess"
    case connectionsPerApp = "connections.maximumPerApp"
    case connectionsReserved = "connections.reservedForFirstConnections"
    case firstMessage = "connections.firstMessageSeconds"
    case pendingRequests = "connections.maximumPendingRequests"
    case callbackAddresses = "connections.maximumCallbackAddresses"
    case queuedOutput = "connections.maximumQueuedOutputBytes"
    case fileDescriptors = "LimitNOFILE"
}

/// Logs each limit the first time it is reached, then at most once a minute with how many
/// times it was reached meanwhile: a flood of refusals must not become a flood of log lines.
struct LimitLog {
    private var lastLogged: [PeerLimit: NIODeadline] = [:]
    private var suppressed: [PeerLimit: Int] = [:]
    static let interval = TimeAmount.seconds(60)

    mutating func reached(_ limit: PeerLimit, _ detail: String, logger: Logger, now: NIODeadline = .now()) {
        if let last = lastLogged[limit], now - last < Self.interval {
            suppressed[limit, default: 0] += 1
            return
        }
        let more = suppressed.removeValue(forKey: limit).map { " (reached \($0) more times since the last report)" } ?? ""
        lastLogged[limit] = now
        logger.warning("limit \(limit.rawValue) reached: \(detail)\(more)", metadata: ["limit": "\(limit.rawValue)"])
    }
}
