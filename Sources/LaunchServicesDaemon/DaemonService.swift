import Logging
import ServiceLifecycle

/// The daemon as a swift-service-lifecycle `Service`: load, bind, serve until the group
/// shuts down gracefully (SIGTERM/SIGINT), then stop.
public struct DaemonService: Service {
    public let daemon: LaunchServicesDaemon

    public init(daemon: LaunchServicesDaemon) {
        self.daemon = daemon
    }

    public func run() async throws {
        await daemon.loadRegistry()
        try await daemon.bind()
        try? await gracefulShutdown()
        await daemon.shutdown()
    }
}
