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
}

extension LaunchedProcess {
    package func prewrite(_ bytes: [UInt8]) -> Int { 0 }
}

/// Starts apps. The daemon uses `AppLauncher` (posix_spawn with a socketpair as fd 3);
/// in-process tests use a launcher whose apps live in memory.
package protocol AppLaunching: Sendable {
    func launch(_ bundle: AppBundle) throws(AppLauncher.SpawnError) -> any LaunchedProcess
}
