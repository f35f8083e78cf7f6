import LaunchServicesCore
import LaunchServicesDaemon
import NIOConcurrencyHelpers
import NIOCore

/// Starts no process: records each desktop launch the in-process daemon asks for and
/// answers it, on the loop as a later task, with the outcome the test set for the entry
/// (`running`, with a made-up pid, unless told otherwise). Lets the opening room's desktop
/// half be tested on the embedded loop, deterministically.
final class SimulatedDesktopLauncher: DesktopLaunching, Sendable {
    private struct State {
        var launches: [DesktopLaunchRequest] = []
        var outcomes: [String: DesktopLaunchOutcome] = [:]
        var running: [RunningDesktopApp] = []
        var nextPid: Int32 = 40_000
    }

    private let loop: EventLoop
    private let state = NIOLockedValueBox(State())

    init(loop: EventLoop) {
        self.loop = loop
    }

    var launches: [DesktopLaunchRequest] { state.withLockedValue { $0.launches } }

    func answer(_ id: String, with outcome: DesktopLaunchOutcome) {
        state.withLockedValue { $0.outcomes[id] = outcome }
    }

    func launch(_ request: DesktopLaunchRequest, completion: @escaping ([DesktopLaunchOutcome]) -> Void) {
        let outcomes = state.withLockedValue { state -> [DesktopLaunchOutcome] in
            state.launches.append(request)
            return request.commands.map { _ in
                if let scripted = state.outcomes[request.desktopID] { return scripted }
                state.nextPid += 1
                state.running.append(RunningDesktopApp(desktopID: request.desktopID, pid: state.nextPid))
                return .running(pid: state.nextPid)
            }
        }
        let bound = NIOLoopBound(completion, eventLoop: loop)
        loop.execute { bound.value(outcomes) }
    }

    var runningApps: [RunningDesktopApp] { state.withLockedValue { $0.running } }

    func shutdown() {}
}
