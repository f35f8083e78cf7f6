import LaunchServicesCore
import Logging
import NIOCore

/// A desktop app process the daemon started and still watches (until it exits).
public struct RunningDesktopApp: Sendable, Equatable {
    public init(desktopID: String, pid: Int32, scope: String? = nil) {
        self.desktopID = desktopID
        self.pid = pid
        self.scope = scope
    }

    public var desktopID: String
    public var pid: Int32
    /// The transient scope it runs in, once the user manager accepted it.
    public var scope: String?
}

/// Starts desktop apps: `DesktopLauncher` for real; the testing kit may supply its own.
package protocol DesktopLaunching: AnyObject {
    /// Starts each of `request.commands`; `completion` runs once, on the loop, with one
    /// outcome per command, in order, when every one is known.
    func launch(_ request: DesktopLaunchRequest, completion: @escaping ([DesktopLaunchOutcome]) -> Void)
    /// The desktop apps started and still alive.
    var runningApps: [RunningDesktopApp] { get }
    /// Answers every launch still owed one with what is known, and stops watching; the
    /// apps themselves keep running.
    func shutdown()
}

/// What starts desktop apps for the daemon: the launcher (Exec lines), the D-Bus activator
/// (nil: no session bus is used, every entry runs its Exec line) and what the stop waits for.
package struct DesktopLaunchers {
    package typealias Maker = @Sendable (_ loop: EventLoop, _ logger: Logger, _ settings: DesktopLaunchSettings, _ output: AppOutput?, _ socketPath: String) -> DesktopLaunchers

    package var launcher: any DesktopLaunching
    package var activator: (any DBusActivating)?
    /// Ends what the launchers run beside the loop (the session bus thread); completes when done.
    package var stop: (EventLoop) -> EventLoopFuture<Void>
    /// The session bus connection, which the daemon also serves its name on
    /// (`SessionBusService`); nil: the daemon is not on the bus.
    package var bus: SessionBusClient?

    package init(launcher: any DesktopLaunching, activator: (any DBusActivating)?, bus: SessionBusClient? = nil,
                 stop: @escaping (EventLoop) -> EventLoopFuture<Void> = { $0.makeSucceededVoidFuture() }) {
        self.launcher = launcher
        self.activator = activator
        self.bus = bus
        self.stop = stop
    }

    /// The daemon's own: processes as the user's (`DesktopLauncher`), D-Bus activation on the
    /// session bus `environment` names (connected on first use).
    package static func real(environment: [String: String]) -> Maker {
        { loop, logger, settings, output, socketPath in
            let bus = SessionBusClient(environment: environment)
            return DesktopLaunchers(launcher: DesktopLauncher(loop: loop, settings: settings, output: output, environment: environment,
                                                              socketPath: socketPath, logger: logger),
                                    activator: DBusApplicationActivator(loop: loop, bus: bus, logger: logger), bus: bus,
                                    stop: { bus.shutdown(on: $0) })
        }
    }
}

/// Starts nothing: every launch is answered `failedToStart` (`stopping`). What a daemon on
/// the testing kit's loop has unless a test gives it a launcher of its own.
package final class UnstartedDesktopLauncher: DesktopLaunching {
    package init() {}
    package func launch(_ request: DesktopLaunchRequest, completion: @escaping ([DesktopLaunchOutcome]) -> Void) {
        completion(request.commands.map { _ in .failed(.stopping) })
    }
    package var runningApps: [RunningDesktopApp] { [] }
    package func shutdown() {}
}
