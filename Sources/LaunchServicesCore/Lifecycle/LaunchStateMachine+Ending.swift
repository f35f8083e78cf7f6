/// An app's end, once the machine has decided it, as one value: a quit step's timer cannot
/// outlive the quit, an eviction is not half a quit, and an app killed by either is known
/// to be killed. Whatever the end, the next open waits for the exit and launches afresh.
extension LaunchStateMachine {
    public enum Ending: Sendable, Equatable {
        /// Killed (SIGKILL) to make room: more apps were alive than allowed and it was the
        /// least recently used suspended one. Nobody waits to hear how it ended.
        case evicted
        /// Asked to quit: its connection was closed, so it should exit by itself; SIGTERM
        /// follows when the step timer `timer` fires.
        case closed(timer: LaunchToken)
        /// Asked to quit and still alive after that: SIGTERM was sent; SIGKILL follows when
        /// the step timer `timer` fires.
        case asked(timer: LaunchToken)
        /// Asked to quit, and SIGKILL was sent (by the quit's last step, or by an eviction
        /// before the quit came): only the exit is left.
        case killed

        /// How far a quit has got, which its caller hears at the exit; nil when nobody asked.
        public var quitStep: QuitStep? {
            switch self {
            case .evicted: nil
            case .closed: .closed
            case .asked: .asked
            case .killed: .killed
            }
        }

        /// The token of the quit step's timer running now; a timer with another is stale.
        var timer: LaunchToken? {
            switch self {
            case .closed(let timer), .asked(let timer): timer
            case .evicted, .killed: nil
            }
        }

        /// SIGKILL was sent: the process is as good as gone, so it no longer counts as alive
        /// against the live-app limit (nothing else is evicted to make room for it).
        var isKilled: Bool {
            switch self {
            case .evicted, .killed: true
            case .closed, .asked: false
            }
        }
    }
}
