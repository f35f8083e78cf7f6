/// An app's life as one value: the stage it is at, carrying what only that stage has, so a
/// record cannot hold a process id with no process or a grace timer outside the background.
///
/// Only the stages the machine enters: the wire's `AppState.inactive` (iOS's moment between
/// launching or resigning and the next stage) has no case, since here a launched app goes
/// straight to `active` (or the background) and one that resigns straight to the background.
extension LaunchStateMachine {
    public enum Lifecycle: Sendable, Equatable {
        /// No process.
        case notRunning
        /// Spawned for an open and not done launching; `pid` is nil until the spawn is reported.
        case launching(pid: Int32?)
        /// The frontmost app.
        case active(pid: Int32?)
        /// Running in the background; `grace` is the token of the timer that suspends it
        /// (nil: none runs).
        case background(pid: Int32?, grace: LaunchToken?)
        /// Stopped (SIGSTOP): it keeps its memory and connection, runs nothing.
        case suspended(pid: Int32?)

        /// The stage as the wire and `lsctl running` name it.
        public var state: AppState {
            switch self {
            case .notRunning: .notRunning
            case .launching: .launching
            case .active: .active
            case .background: .background
            case .suspended: .suspended
            }
        }

        /// The process, once spawned or attached. Setting it keeps the stage; an app that is
        /// not running has no process, so it is ignored there.
        public internal(set) var pid: Int32? {
            get {
                switch self {
                case .notRunning: nil
                case .launching(let pid), .active(let pid), .background(let pid, _), .suspended(let pid): pid
                }
            }
            set {
                switch self {
                case .notRunning: break
                case .launching: self = .launching(pid: newValue)
                case .active: self = .active(pid: newValue)
                case .background(_, let grace): self = .background(pid: newValue, grace: grace)
                case .suspended: self = .suspended(pid: newValue)
                }
            }
        }
    }
}
