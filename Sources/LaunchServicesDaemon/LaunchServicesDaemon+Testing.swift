import LaunchServicesCore
import NIOCore

/// What the testing kit (`InProcessDaemon`) needs beyond the socket: registering bundles
/// in memory and reading the machine's view of an app. Package access: not for apps.
extension LaunchServicesDaemon {
    /// Registers a bundle in memory only, as if `lsctl register` had read it (no files), at
    /// `time` (milliseconds since the Unix epoch), or now.
    package func registerInMemory(_ bundle: AppBundle, at time: Int64? = nil) {
        loop.assertInEventLoop()
        registryService.register(bundle, source: .manual, at: time ?? registryService.issueTime())
    }

    /// Registers bundles in memory at one time, now, as one folder scan would.
    package func registerInMemory(_ bundles: [AppBundle]) {
        loop.assertInEventLoop()
        guard !bundles.isEmpty else { return }
        let time = registryService.issueTime()
        for bundle in bundles { registryService.register(bundle, source: .manual, at: time) }
    }

    /// Reads the apps folders and takes them in, then watches them, as `loadRegistry` does
    /// without a state folder, on the loop: for the testing kit, whose loop is its worker.
    package func loadAppsFoldersInMemory() throws {
        loop.assertInEventLoop()
        registryService.apply(try RegistryService.read(stateFolder: nil, folders: configuration.appsFolders, now: registryService.wallClock()))
    }

    package func setDefaultInMemory(_ app: String?, for scheme: URLScheme) {
        loop.assertInEventLoop()
        registryService.setDefault(app, for: scheme)
    }

    package func state(of app: String) -> AppState { machine.state(of: app) }
    package var frontmostApp: String? { machine.frontmost }
    package func opensInFlight(of app: String) -> Int { machine.apps[app]?.opensInFlight ?? 0 }
    package var opensAnswered: Int { executor.ledger.served }
}
