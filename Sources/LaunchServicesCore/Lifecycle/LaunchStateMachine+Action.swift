/// The machine's output: what it asks the daemon to do (`Action`), and why it ends an app
/// (`TerminationReason`), so the daemon can act and say why without reading machine state.
extension LaunchStateMachine {
    public enum Action: Sendable, Equatable {
        /// Start the app's executable. With a prelude (`prewritesLaunchMethods`), write the
        /// welcome and both launch methods into its connection at once, before it says hello.
        case spawn(app: String, prelude: LaunchPrelude? = nil)
        /// Send a launch method (`willFinishLaunching`/`didFinishLaunching`) and await its reply under `token`.
        case sendLaunchMethod(app: String, phase: LaunchPhase, token: LaunchToken, options: OpenRequest)
        /// Deliver the URL (`open` or `handleOpen`) and await the reply under `token`.
        case deliver(app: String, token: LaunchToken, request: OpenRequest)
        /// The launch's own delivery, written at the hello, before either launch method has
        /// answered (the app's runtime said it drops it after a NO from either): the reply
        /// comes under `token` only if both said YES. Its phase begins when the second
        /// answer is read, as a `deliver` sent then would.
        case deliverAtCheckIn(app: String, token: LaunchToken, request: OpenRequest)
        /// A one-way lifecycle notification.
        case notify(app: String, AppNotification)
        /// Call `deadlinePassed(app:token:)` after `after`, unless the phase ended first.
        case armDeadline(app: String, phase: LaunchPhase, token: LaunchToken, after: Duration)
        /// Answer the caller waiting under the request token.
        case reply(requestToken: LaunchToken, OpenOutcome)
        /// Kill the process; its exit comes back as `exited`. The reason is for the log.
        case terminate(app: String, pid: Int32, reason: TerminationReason)
        /// Call `graceExpired(app:token:)` after `after`, unless the app left the background first.
        case armGrace(app: String, token: LaunchToken, after: Duration)
        /// Stop the process (suspension); it keeps its memory and connection, runs nothing.
        case suspend(app: String, pid: Int32)
        /// Let a suspended process run again.
        case resume(app: String, pid: Int32)
        /// Close the app's connection: the runtime calls `willTerminate` and exits (quit).
        case closeConnection(app: String)
        /// Ask the process to end (SIGTERM); it may have ignored its closed connection.
        case askToExit(app: String, pid: Int32)
        /// Call `quitStepExpired(app:token:)` after `after`, unless the app exited first.
        case armQuitStep(app: String, token: LaunchToken, after: Duration)
        /// An app asked to quit has exited with `status`: answer those who asked, saying how
        /// far the quit went (`closed`: it exited by itself; `asked`: after SIGTERM; `killed`: SIGKILL).
        case quitEnded(app: String, step: QuitStep, status: ExitStatus)
    }


    /// What a launched app finds waiting on its connection at spawn: the welcome, then
    /// `launchMethod` `willFinishLaunching` and `didFinishLaunching` with `request`'s options,
    /// under the tokens the launch reserved for them. Neither frame depends on an answer (the
    /// second launch method is sent whatever the first answered), so both can be written
    /// before the app runs, and only the delivery, which depends on both answers, still waits
    /// for them: one daemon→app→daemon crossing after the hello instead of three.
    public struct LaunchPrelude: Sendable, Equatable {
        public var willFinishLaunching: LaunchToken
        public var didFinishLaunching: LaunchToken
        public var request: OpenRequest
        /// The delivery's token, when it was written at the hello (`deliverAtCheckIn`);
        /// nil at spawn, and for a runtime that does not drop a vetoed launch's delivery.
        public var openURL: LaunchToken?

        public init(willFinishLaunching: LaunchToken, didFinishLaunching: LaunchToken, request: OpenRequest, openURL: LaunchToken? = nil) {
            self.willFinishLaunching = willFinishLaunching
            self.didFinishLaunching = didFinishLaunching
            self.request = request
            self.openURL = openURL
        }

        /// The token reserved for a phase whose frame is already on the connection.
        public func token(for phase: LaunchPhase) -> LaunchToken? {
            switch phase {
            case .willFinishLaunching: willFinishLaunching
            case .didFinishLaunching: didFinishLaunching
            case .openURL: openURL
            case .launch: nil
            }
        }
    }

    /// Why the machine ends an app: each is a decision the machine made, so the daemon can
    /// say why without inspecting the machine's state.
    public enum TerminationReason: Sendable, Equatable {
        /// The watchdog: the app did not finish `phase` in time. A hung app cannot be
        /// trusted with the next open either, so every phase's deadline ends it.
        case missedDeadline(LaunchPhase)
        /// More apps are alive than allowed and this was the least recently used suspended one.
        case evicted
        /// Its connection to the daemon closed, so it can no longer be driven.
        case disconnected
        /// Asked to quit, it outlived its closed connection and SIGTERM.
        case quit
    }
}
