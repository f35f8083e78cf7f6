import ArgumentParser
import Foundation
import LaunchServicesProtocol
import LaunchServicesSystemd
import LaunchServicesDaemon
import Logging
import NIOPosix
import ServiceLifecycle

/// `launchservicesd [--socket PATH] [--apps DIR …] [--state DIR] [--config FILE]`.
@main
struct LaunchServicesDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launchservicesd",
        abstract: "The per-user Launch Services daemon: registry, launching, URL delivery.",
        discussion: "Runs in the foreground and logs to stderr; SIGTERM or SIGINT stops it cleanly (apps it launched are closed too). One daemon at a time uses a state folder: a second one on the same --state refuses to start, naming the first one's pid and socket. A damaged database in the state folder is set aside unchanged (FILE.damaged-TIMESTAMP) and replaced by a new one; lsctl status says what was lost. On the session bus ($DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus) it owns the name org.swift_launch_services.LaunchServices and serves, at /org/swift_launch_services/LaunchServices, org.freedesktop.Application (what GLib calls for the DBusActivatable entry lsctl export-xdg writes) and org.swift_launch_services.LaunchServices1 (Open, CanOpen, Explain, Apps, Running, History, Quit, the Version property, the AppStateChanged signal; its introspection is in docs/dbus/); a D-Bus caller is identified by the pid and uid the bus gives, as a socket peer is. Without a session bus it says so once and serves its socket alone; a lost bus is tried again, and the name owned again when it is back. Exit status: "
            + DaemonExitStatus.all.map { "\($0.status) \($0.meaning)" }.joined(separator: "; ") + ".",
        version: LaunchServicesDaemon.version)

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    @Option(name: .customLong("apps"), help: "An apps folder to scan for bundles; repeat for several (default: $XDG_DATA_HOME/launchservices/apps).")
    var appsFolders: [String] = []

    @Option(help: "State folder, locked while the daemon runs (default: $XDG_STATE_HOME/launchservices).")
    var state: String?

    @Option(help: "JSON configuration file (default: $XDG_CONFIG_HOME/launchservices/launchservicesd.json when it exists).")
    var config: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        umask(0o077)
        var configuration: DaemonConfiguration
        do {
            if let config {
                configuration = try DaemonConfiguration.load(file: config)
            } else if FileManager.default.fileExists(atPath: DaemonConfiguration.defaultConfigFile()) {
                configuration = try DaemonConfiguration.load(file: DaemonConfiguration.defaultConfigFile())
            } else {
                configuration = DaemonConfiguration()
            }
        } catch {
            throw ValidationError("\(error)")
        }
        if !appsFolders.isEmpty { configuration.appsFolders = appsFolders }
        let stateFolder = state ?? DaemonConfiguration.defaultStateFolder()
        try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])

        let level = logLevel
        // Under systemd with journald: structured journal entries; otherwise readable stderr.
        let toJournal = JournalLogHandler.stderrIsJournal
        LoggingSystem.bootstrap { label in
            if toJournal {
                var handler = JournalLogHandler(label: label, identifier: "launchservicesd")
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "launchservicesd")
        // Socket activation: adopt the socket systemd listens on instead of binding one.
        let activated = SocketActivation.listeningUnixSocket()
        let socketPath = activated.flatMap(SocketActivation.boundPath(of:)) ?? socket ?? SocketPath.resolve()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let daemon = LaunchServicesDaemon(
            configuration: configuration, socketPath: socketPath, stateFolder: stateFolder, activatedSocket: activated, loop: group.next(), logger: logger)
        let serviceGroup = ServiceGroup(configuration: .init(
            services: [.init(service: DaemonService(daemon: daemon))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await serviceGroup.run()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
