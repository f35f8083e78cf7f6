/// What the machine keeps per app (`AppRecord`) and per open sent to an app (`Transaction`).
extension LaunchStateMachine {
    /// Everything known about one app.
    public struct AppRecord: Sendable, Equatable {
        /// Where the app is in its life, with the data of that stage.
        public internal(set) var lifecycle: Lifecycle = .notRunning
        public var state: AppState { lifecycle.state }
        public var pid: Int32? { lifecycle.pid }
        /// The transactions sent to the app and not yet over, oldest first: one in a launch
        /// phase, or up to `maximumOpensInFlight` deliveries.
        var inFlight: [Transaction] = []
        var queue = FairOpenQueue()
        public var pendingOpens: Int { queue.count + inFlight.count }
        /// Opens sent to the app and not yet answered by it (or cut short).
        public var opensInFlight: Int { inFlight.count }
        public var currentPhase: LaunchPhase? { inFlight.first?.phase }
        /// The token of the oldest open's running phase: what its answer or deadline carries.
        public var currentPhaseToken: LaunchToken? { inFlight.first?.phaseToken }
        /// When the app last came to the front or began an open: the LRU order of eviction.
        public internal(set) var lastUsed: UInt64 = 0
        /// The running grace timer's token (nil: none); a timer with another token is stale.
        var graceToken: LaunchToken? {
            if case .background(_, let grace) = lifecycle { grace } else { nil }
        }

        /// Stops the background grace, if one runs: its timer is stale from now on.
        mutating func stopGrace() {
            if case .background(let pid, _) = lifecycle { lifecycle = .background(pid: pid, grace: nil) }
        }

        /// The end the machine decided (eviction or quit) and how far it has got; nil while
        /// nothing ends the app. Only a running process is ended: `ended()` clears it.
        public internal(set) var ending: Ending?

        /// The process is gone, or never started: no stage, nothing in flight, no end under
        /// way. The one way a record becomes `notRunning`, so none keeps an end or an open.
        mutating func ended() {
            lifecycle = .notRunning
            inFlight = []
            ending = nil
        }
    }

    struct Transaction: Sendable, Equatable {
        var request: OpenRequest
        var phase: LaunchPhase
        var phaseToken: LaunchToken
        var phaseStarted: UInt64
        /// Where the open found the app; every answer carries it.
        var launchState: LaunchState = .cold
        /// A launch whose launch methods were written at spawn: the tokens their phases take.
        var prelude: LaunchPrelude?
        var timings: [PhaseTiming] = []
        /// Where the transaction stands with its caller: one value, not three flags that
        /// could disagree.
        var standing: Standing = .awaited

        /// Each standing after `awaited` means the caller has been answered.
        enum Standing: Sendable, Equatable {
            /// The caller waits for the answer.
            case awaited
            /// The caller was answered early (quit, shutdown); what remains finishes the launch.
            case answered
            /// A launch method said NO (its caller heard so, unless answered already): the app
            /// still finishes launching, no URL is delivered.
            case vetoed
            /// The watchdog fired and the app is being killed: the transaction waits only for
            /// the exit, and every late check-in, answer or timer is ignored.
            case terminating
        }

        /// Launched for this open: what "cold" means (`launchState`), so it is stored once.
        var cold: Bool { launchState == .cold }
        /// The caller has been answered (veto, timeout, quit, shutdown).
        var replied: Bool { standing != .awaited }
        var vetoed: Bool { standing == .vetoed }
        var terminating: Bool { standing == .terminating }

        /// Whether an event carrying `token` belongs to the phase now running.
        func isCurrent(_ token: LaunchToken) -> Bool { !terminating && token == phaseToken }
    }
}
