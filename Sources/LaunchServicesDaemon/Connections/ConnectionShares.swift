/// Who holds the daemon's socket connections, counted three ways — by process, by app (an
/// app together with every process it started), and for the whole user — and whether one
/// more may be taken. The per-user limit alone let one process take every connection the
/// user has and shut out all the others; the shares below it keep any one process or app
/// from doing so, and the reserve keeps a few for processes that hold none (the user's next
/// `lsopen`). A plain value: `ConnectionTable` keeps it and decides nothing else with it.
struct ConnectionShares {
    /// Whose shares a connection counts against.
    struct Holder: Equatable {
        /// The peer process (SO_PEERCRED), as it was when it connected.
        var pid: Int32
        /// The app the process belongs to (the app itself, one of its descendants, or an
        /// app's orphan under the orphans' identity); nil for the user's own processes.
        var app: String?
    }

    /// Why one more connection is refused: the limit it meets, and what is held already.
    enum Refusal: Equatable {
        case process(holds: Int)
        case app(holds: Int)
        case user(holds: Int)
        /// The user's connections reached the reserve, and this process already holds some.
        case reserve(userHolds: Int, processHolds: Int)
    }

    let limits: ConnectionLimits
    /// Connections counted (every socket connection, none of the apps' launch connections).
    private(set) var total = 0
    private var byProcess: [Int32: Int] = [:]
    private var byApp: [String: Int] = [:]

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    func held(byProcess pid: Int32) -> Int { byProcess[pid, default: 0] }
    func held(byApp app: String) -> Int { byApp[app, default: 0] }

    /// Nil when `holder` may take one more connection. The user's limit is absolute and is
    /// named first when reached; below it, the holder's own shares, then the reserve.
    func refusal(for holder: Holder) -> Refusal? {
        if let refusal = refusal(forProcess: holder.pid) { return refusal }
        let process = held(byProcess: holder.pid)
        if let app = holder.app, held(byApp: app) >= limits.maximumPerApp { return .app(holds: held(byApp: app)) }
        if process > 0, total >= limits.maximumPerUser - limits.reservedForFirstConnections {
            return .reserve(userHolds: total, processHolds: process)
        }
        return nil
    }

    /// The refusals that need only the peer's pid: the user's limit, then the process's
    /// share. Asked before the peer's app is looked up (a walk of `/proc`), so a flood at
    /// either limit costs no walk per refused connection.
    func refusal(forProcess pid: Int32) -> Refusal? {
        if total >= limits.maximumPerUser { return .user(holds: total) }
        let process = held(byProcess: pid)
        if process >= limits.maximumPerProcess { return .process(holds: process) }
        return nil
    }

    mutating func add(_ holder: Holder) {
        total += 1
        byProcess[holder.pid, default: 0] += 1
        if let app = holder.app { byApp[app, default: 0] += 1 }
    }

    mutating func remove(_ holder: Holder) {
        total -= 1
        Self.decrement(&byProcess, holder.pid)
        if let app = holder.app { Self.decrement(&byApp, app) }
    }

    /// Counts that reach zero are dropped, so the tables hold only current holders.
    private static func decrement<Key: Hashable>(_ counts: inout [Key: Int], _ key: Key) {
        guard let count = counts[key] else { return }
        counts[key] = count > 1 ? count - 1 : nil
    }
}

extension ConnectionShares.Refusal {
    /// The configuration key of the limit, as the log and the peer's error name it.
    var limit: PeerLimit {
        switch self {
        case .process: .connectionsPerProcess
        case .app: .connectionsPerApp
        case .user: .connectionsPerUser
        case .reserve: .connectionsReserved
        }
    }

    /// What the refused peer reads (an `unavailable` failure): the limit by name, and what to do.
    func message(for holder: ConnectionShares.Holder, uid: UInt32, limits: ConnectionLimits) -> String {
        switch self {
        case .process(let holds):
            "pid \(holder.pid) already holds \(holds) connections to launchservicesd, the most one process may hold (connections.maximumPerProcess); close idle ones and retry"
        case .app(let holds):
            "\(holder.app ?? "the app") and the processes it started already hold \(holds) connections to launchservicesd, the most one app may hold (connections.maximumPerApp); close idle ones and retry"
        case .user(let holds):
            "launchservicesd already serves \(holds) connections of uid \(uid), the limit (connections.maximumPerUser); close idle ones and retry"
        case .reserve(let userHolds, let processHolds):
            "launchservicesd serves \(userHolds) connections of uid \(uid); the last \(limits.reservedForFirstConnections) of connections.maximumPerUser (\(limits.maximumPerUser)) are kept for processes that hold none (connections.reservedForFirstConnections), and pid \(holder.pid) already holds \(processHolds); close idle ones and retry"
        }
    }

    /// The log line's detail (the limit's key is logged with it).
    func detail(for holder: ConnectionShares.Holder, uid: UInt32) -> String {
        let who = holder.app.map { "pid \(holder.pid) (\($0))" } ?? "pid \(holder.pid)"
        switch self {
        case .process(let holds): return "\(who) holds \(holds) connections and was refused another"
        case .app(let holds): return "\(holder.app ?? "an app") holds \(holds) connections; \(who) was refused another"
        case .user(let holds): return "uid \(uid) holds \(holds) connections; \(who) was refused"
        case .reserve(let userHolds, let processHolds): return "uid \(uid) holds \(userHolds) connections, the rest are kept for processes that hold none; \(who), holding \(processHolds), was refused"
        }
    }
}
