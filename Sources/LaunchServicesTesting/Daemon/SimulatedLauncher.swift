import LaunchServicesCore
import LaunchServicesDaemon
import NIOEmbedded

/// Starts simulated apps instead of processes: each launch makes a `SimulatedApp` with the
/// behaviour set for its bundle id, and a made-up pid.
// Unchecked: used only from the thread of the `EmbeddedEventLoop` it was made for (the test's), like that loop.
final class SimulatedLauncher: AppLaunching, @unchecked Sendable {
    private let loop: EmbeddedEventLoop
    private var nextPID: Int32 = 4_000_000
    /// The behaviour the next launch of each app gets.
    var behaviours: [String: SimulatedBehaviour] = [:]
    /// Every app launched, oldest first (a relaunch is a new one).
    private(set) var launched: [SimulatedApp] = []
    /// Launches that are to fail once each, by app, before its launches succeed again: the
    /// failure's text, oldest first.
    var failures: [String: [String]] = [:]

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    /// Never given a connection: it prepares none (`prepareConnection` is nil).
    package func launch(_ bundle: AppBundle, connection: PreparedAppConnection?) throws(AppLauncher.SpawnError) -> any LaunchedProcess {
        let behaviour = behaviours[bundle.id] ?? SimulatedBehaviour()
        if var once = failures[bundle.id], !once.isEmpty {
            let failure = once.removeFirst()
            failures[bundle.id] = once.isEmpty ? nil : once
            throw AppLauncher.SpawnError(description: failure)
        }
        if let failure = behaviour.launchFailure {
            throw AppLauncher.SpawnError(description: failure)
        }
        nextPID += 1
        let app = SimulatedApp(bundleID: bundle.id, pid: nextPID, behaviour: behaviour, loop: loop)
        launched.append(app)
        return app
    }
}
