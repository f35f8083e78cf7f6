import LaunchServicesCore
import NIOCore

/// What `DesktopLauncher` keeps per launch, per watched app and per request.
extension DesktopLauncher {
    /// One process being started, until its outcome is answered. Loop-confined.
    final class Launch {
        enum Phase: Equatable {
            case starting
            /// Exited within the grace; the outcome waits for the end of its stderr.
            case exited(ExitStatus?)
            case answered
        }

        let id: Int
        let request: DesktopLaunchRequest
        let path: String
        let answer: (DesktopLaunchOutcome) -> Void
        var phase = Phase.starting
        var pid: Int32?
        var pidfd: Int32 = -1
        var reports: DesktopWaiterReports?
        var tailChannel: EventLoopFuture<Channel>?
        var tail: StderrTail
        var tailEnded = false
        var deadline: Scheduled<Void>?
        var settle: Scheduled<Void>?

        init(id: Int, request: DesktopLaunchRequest, path: String, tail: StderrTail, answer: @escaping (DesktopLaunchOutcome) -> Void) {
            self.id = id
            self.request = request
            self.path = path
            self.tail = tail
            self.answer = answer
        }
    }

    /// A desktop app watched until it exits.
    struct Watched {
        var app: RunningDesktopApp
        var watch: DesktopExitWatch?
    }

    /// The outcomes of one request's processes, handed over when the last is known.
    final class Collected {
        private var outcomes: [DesktopLaunchOutcome?]
        private var missing: Int
        private let completion: ([DesktopLaunchOutcome]) -> Void

        init(count: Int, completion: @escaping ([DesktopLaunchOutcome]) -> Void) {
            outcomes = Array(repeating: nil, count: count)
            missing = count
            self.completion = completion
        }

        func set(_ index: Int, _ outcome: DesktopLaunchOutcome) {
            guard outcomes[index] == nil else { return }
            outcomes[index] = outcome
            missing -= 1
            if missing == 0 { completion(outcomes.compactMap { $0 }) }
        }
    }
}
