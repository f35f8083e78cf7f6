import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// The executor alone, on an embedded loop: what acting produces goes back to the machine
/// only once the list being carried out is done, and deadline timers belong to the phase
/// token they guard.
@Suite("Action executor: feedback after each list, timers by token")
struct ActionExecutorTests {
    /// A launcher whose launches all fail, recording which apps it was asked for.
    final class RefusingLauncher: AppLaunching {
        let asked = Mutex<[String]>([])
        func launch(_ bundle: AppBundle, connection: PreparedAppConnection?) throws(AppLauncher.SpawnError) -> any LaunchedProcess {
            asked.withLock { $0.append(bundle.id) }
            throw AppLauncher.SpawnError(description: "\(bundle.id): refused by the test")
        }
    }

    typealias Action = LaunchStateMachine.Action

    let loop = EmbeddedEventLoop()
    let launcher = RefusingLauncher()
    let executor: ActionExecutor

    init() {
        let logger = Logger(label: "action-executor-tests") { _ in SwiftLogNoOpLogHandler() }
        let configuration = DaemonConfiguration(appsFolders: [])
        let connections = ConnectionTable(limits: configuration.connectionLimits, maximumFrameLength: configuration.maximumFrameLength, logger: logger, loop: loop)
        let registry = RegistryService(loop: loop, logger: logger, folders: [], watchFolders: false, files: .onLoop(loop))
        for app in ["a", "b", "c", "d", "e"] { registry.register(.simulated(app, schemes: [app]), source: .manual, at: 1) }
        executor = ActionExecutor(loop: loop, logger: logger, configuration: configuration,
                                  supervisor: ProcessSupervisor(loop: loop, launcher: launcher, logger: logger), connections: connections,
                                  registry: registry, records: OpenRecords(loop: loop, logger: logger, connections: connections))
    }

    /// A feedback, with the launches asked for when it arrived.
    struct Heard: Equatable {
        var feedback: String
        var launchesSoFar: [String]
    }

    @Test("a spawn's failure reaches the machine after the rest of its list is carried out, not in the middle of it")
    func feedbackAfterTheList() {
        var heard: [Heard] = []
        executor.feedback = { [launcher] feedback in
            guard case .spawnFailed(let app, _) = feedback else { return }
            heard.append(Heard(feedback: "spawnFailed \(app)", launchesSoFar: launcher.asked.withLock { $0 }))
        }
        executor.perform([.spawn(app: "a"), .spawn(app: "b"), .spawn(app: "c")])
        #expect(heard == [
            Heard(feedback: "spawnFailed a", launchesSoFar: ["a", "b", "c"]),
            Heard(feedback: "spawnFailed b", launchesSoFar: ["a", "b", "c"]),
            Heard(feedback: "spawnFailed c", launchesSoFar: ["a", "b", "c"]),
        ])
    }

    @Test("the list the machine returns for one feedback is carried out whole before the next feedback is handed back")
    func listsInOrder() {
        var heard: [Heard] = []
        var answered = false
        executor.feedback = { [executor, launcher] feedback in
            guard case .spawnFailed(let app, _) = feedback else { return }
            heard.append(Heard(feedback: "spawnFailed \(app)", launchesSoFar: launcher.asked.withLock { $0 }))
            // The machine answers a's failure by starting d and e; b's failure waits for them.
            if app == "a" && !answered {
                answered = true
                executor.perform([.spawn(app: "d"), .spawn(app: "e")])
            }
        }
        executor.perform([.spawn(app: "a"), .spawn(app: "b")])
        #expect(heard == [
            Heard(feedback: "spawnFailed a", launchesSoFar: ["a", "b"]),
            Heard(feedback: "spawnFailed b", launchesSoFar: ["a", "b", "d", "e"]),
            Heard(feedback: "spawnFailed d", launchesSoFar: ["a", "b", "d", "e"]),
            Heard(feedback: "spawnFailed e", launchesSoFar: ["a", "b", "d", "e"]),
        ])
    }

    @Test("two deadlines armed for one app both run: a later arm never replaces an earlier phase's timer while the machine still runs that phase")
    func timersByToken() {
        var passed: [LaunchToken] = []
        executor.feedback = { feedback in
            if case .deadlinePassed(_, let token) = feedback { passed.append(token) }
        }
        executor.phaseIsRunning = { _, _ in true }
        executor.perform([.armDeadline(app: "a", phase: .launch, token: 7, after: .seconds(3))])
        executor.perform([.armDeadline(app: "a", phase: .launch, token: 9, after: .seconds(1))])
        loop.advanceTime(by: .seconds(2))
        #expect(passed == [9])
        loop.advanceTime(by: .seconds(2))
        #expect(passed == [9, 7])
    }

    @Test("a timer of a phase the machine has finished is dropped when the app's next deadline is armed; an exit drops them all")
    func finishedPhasesDropped() {
        var passed: [LaunchToken] = []
        executor.feedback = { feedback in
            if case .deadlinePassed(_, let token) = feedback { passed.append(token) }
        }
        var running: Set<LaunchToken> = [1, 2]
        executor.phaseIsRunning = { _, token in running.contains(token) }
        executor.perform([.armDeadline(app: "a", phase: .openURL, token: 1, after: .seconds(1)),
                          .armDeadline(app: "b", phase: .openURL, token: 2, after: .seconds(1))])
        running = [2, 3]
        executor.perform([.armDeadline(app: "a", phase: .openURL, token: 3, after: .seconds(2))])
        executor.forget("b")
        loop.advanceTime(by: .seconds(3))
        #expect(passed == [3], "1 was over, 2's app exited")
    }
}
