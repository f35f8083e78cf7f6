import LaunchServicesCore
import NIOCore

/// What the daemon needs of a process it supervises: who it is, a way to signal it, and
/// word of its exit. `AppProcess` is the real one; the testing kit supplies fakes.
package protocol SupervisedProcess: AnyObject, Sendable {
    var bundleID: String { get }
    var pid: Int32 { get }
    /// Sends a signal; harmless once the process has exited.
    func signal(_ sig: Int32)
    /// Calls `onExit` once, on any thread, when the process has exited and been reaped.
    func watchExit(_ onExit: @escaping @Sendable (ExitStatus) -> Void)
}

/// A process the daemon launched: it also carries the daemon's end of the app's connection.
package protocol LaunchedProcess: SupervisedProcess {
    /// Makes the daemon's channel to the app on `loop`; `initialize` builds its pipeline.
    func connect(on loop: EventLoop, initialize: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Channel>
    /// Writes `bytes` into the app's connection before `connect`, without blocking; how many
    /// the connection took (the rest is the channel's to write first). None where there is
    /// no descriptor (the testing kit's apps).
    func prewrite(_ bytes: [UInt8]) -> Int
    /// The app's launch is settled: what it prints is read from now on (`AppProcess`).
    func hearOutput()
}

extension LaunchedProcess {
    package func prewrite(_ bytes: [UInt8]) -> Int { 0 }
    package func hearOutput() {}
}

/// Starts apps. The daemon uses `AppLauncher` (a spawn with a socketpair as fd 3);
/// in-process tests use a launcher whose apps live in memory.
package protocol AppLaunching: Sendable {
    /// Launches `bundle`, on `connection` when one was made ahead by `prepareConnection`
    /// (discarded if the launch fails).
    func launch(_ bundle: AppBundle, connection: PreparedAppConnection?) throws(AppLauncher.SpawnError) -> any LaunchedProcess
    /// Makes, ahead of a launch, the connection it will use; nil when this launcher's apps
    /// need none (their connections are made at launch).
    func prepareConnection(on loop: EventLoop) -> EventLoopFuture<PreparedAppConnection>?
}

extension AppLaunching {
    package func prepareConnection(on loop: EventLoop) -> EventLoopFuture<PreparedAppConnection>? { nil }
}
