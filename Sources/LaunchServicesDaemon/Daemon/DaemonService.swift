import Logging
import ServiceLifecycle

/// The daemon as a swift-service-lifecycle `Service`: take the state folder and load
/// (`loadRegistry`: the folder's lock, then the served-socket check, then the databases and
/// the apps folders), bind, serve until the group shuts down gracefully (SIGTERM/SIGINT),
/// then stop. Under systemd it reports readiness once the socket serves; the apps registered
/// by hand are read after that (`RegistryService.finishLoading`), and requests that need
/// them wait for them.
public struct DaemonService: Service {
    public let daemon: LaunchServicesDaemon

    public init(daemon: LaunchServicesDaemon) {
        self.daemon = daemon
    }

    public func run() async throws {
        try await daemon.loadRegistry()
        do {
            try await daemon.bind()
        } catch {
            // A socket that cannot be served ends the start: what loading started (the
            // desktop entries' read, the watches, the databases) stops first, while the
            // loop still runs, and the reason is said after.
            await daemon.shutdown()
            throw error
        }
        daemon.startSupervision()
        try? await gracefulShutdown()
        await daemon.shutdown()
    }
}
