import LaunchServicesCore
import NIOCore

/// What the testing kit (`InProcessDaemon`) needs beyond the socket: registering bundles
/// in memory and reading the machine's view of an app. Package access: not for apps.
extension LaunchServicesDaemon {
    /// Registers a bundle in memory only, as if `lsctl register` had read it (no files).
    package func registerInMemory(_ bundle: AppBundle) {
        loop.assertInEventLoop()
        registryService.register(bundle, source: .manual)
    }

    package func setDefaultInMemory(_ app: String?, for scheme: URLScheme) {
        loop.assertInEventLoop()
        registryService.setDefault(app, for: scheme)
    }

    package func state(of app: String) -> AppState { machine.state(of: app) }
    package var frontmostApp: String? { machine.frontmost }
    package var opensAnswered: Int { executor.ledger.served }
}
