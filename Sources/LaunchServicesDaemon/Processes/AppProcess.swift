import CLaunchServicesShim
import Foundation
import LaunchServicesCore
import NIOCore
import NIOPosix

/// A running app process the daemon started: its pid, a pidfd (signals and exit without
/// pid-reuse races) and the daemon's end of the socketpair whose other end is the app's fd 3.
public final class AppProcess: LaunchedProcess, Sendable {
    public let bundleID: String
    public let pid: Int32
    /// Open as long as this object lives (closed in `deinit`), so a signal sent through it
    /// can never reach another process that a reused descriptor number would name.
    let pidfd: Int32
    /// The daemon's end of the socketpair (-1 for an app started by hand, which connected
    /// to the socket instead).
    let channelFD: Int32
    /// The drain of the app's output pipe (log files), finished when the app exits.
    let output: AppLogDrain?
    /// The channel already made for `channelFD` when the launch used a prepared connection;
    /// nil: `connect` adopts the descriptor.
    private let prepared: Channel?

    init(bundleID: String, pid: Int32, pidfd: Int32, channelFD: Int32 = -1, output: AppLogDrain? = nil, prepared: Channel? = nil) {
        self.bundleID = bundleID
        self.output = output
        self.pid = pid
        self.pidfd = pidfd
        self.channelFD = channelFD
        self.prepared = prepared
    }

    deinit {
        if pidfd >= 0 { close(pidfd) }
    }

    /// Calls `onExit` once, on the app watch thread, when the process has exited and been
    /// reaped, after what it printed is in its log.
    public func watchExit(_ onExit: @escaping @Sendable (ExitStatus) -> Void) {
        let watch = ExitWatch(process: self, output: output, onExit: onExit)
        guard AppWatchThread.shared.add(pidfd, watch) else {
            // The kernel refused the registration (out of memory): without it the exit would
            // never be heard, and the app would hold its slot for ever. It is ended instead,
            // and reaped on a thread of its own (not the caller's, the event loop). Its drain
            // stops by itself at the end of file the exit makes.
            signal(SIGKILL)
            let pid = self.pid
            Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                onExit(.signaled(SIGKILL))
            }.start()
            return
        }
    }

    /// Starts reading the app's output pipe, drained into its log file. Its drain was
    /// registered unheard when the pipe was made (ahead of the launch, or at it): the lines a
    /// launching app prints wake no thread while it launches; they wait in the pipe (up to
    /// `AppLogDrain.pipeBytes`).
    package func hearOutput() {
        output?.hear()
    }

    /// Sends a signal through the pidfd; harmless when the process already exited.
    public func signal(_ sig: Int32) {
        _ = ls_pidfd_send_signal(pidfd, sig)
    }

    /// Writes into the daemon's end of the socket pair before its channel has written
    /// anything: the prelude goes in with one `send`, not through the channel's pipeline and
    /// a flush. MSG_DONTWAIT: never blocks, whether or not NIO has made the socket
    /// non-blocking yet.
    package func prewrite(_ bytes: [UInt8]) -> Int {
        guard channelFD >= 0, !bytes.isEmpty else { return 0 }
        while true {
            // MSG_NOSIGNAL: an app already gone is a short write here, never a SIGPIPE.
            let n = bytes.withUnsafeBytes { send(channelFD, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n < 0 && errno == EINTR { continue }
            return max(n, 0)
        }
    }

    /// The daemon's channel to the app on `loop`: the prepared one with its pipeline built
    /// now, or the daemon's end of the socketpair adopted into a new one.
    package func connect(on loop: EventLoop, initialize: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Channel> {
        if let prepared {
            // As the bootstrap does for a channel it adopts: one whose pipeline cannot be
            // built is closed, not left registered with nothing to read it.
            return initialize(prepared).map { prepared }.flatMapError { error in
                prepared.close(promise: nil)
                return loop.makeFailedFuture(error)
            }
        }
        return ClientBootstrap(group: loop).channelInitializer(initialize).withConnectedSocket(channelFD)
    }
}

/// Starts app executables with the daemon's connection as fd 3.
public struct AppLauncher: AppLaunching {
    /// The daemon's environment, computed once; each spawn adds the app's own variables.
    let baseEnvironment: [String]
    /// The same as C strings, made once: a spawn copies only the app's own five.
    private let baseStrings: CStringArray
    let socketPath: String
    /// `LAUNCHSERVICES_DAEMON_PID=…`, made once (a spawn made it, and asked the kernel, each time).
    private let daemonPIDVariable = "LAUNCHSERVICES_DAEMON_PID=\(getpid())"
    /// Where each app's stdout and stderr go; `nil`: the daemon's own.
    let output: AppOutput?

    public init(socketPath: String, output: AppOutput? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.output = output
        let ours: Set<String> = ["LAUNCHSERVICES_APP_FD", "LAUNCHSERVICES_DAEMON_PID", "LAUNCHSERVICES_BUNDLE_ID", "LAUNCHSERVICES_BUNDLE_PATH", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]
        baseEnvironment = environment.filter { !ours.contains($0.key) && $0.key != "LAUNCHSERVICES_SOCKET" }.map { "\($0.key)=\($0.value)" }
        baseStrings = CStringArray(baseEnvironment)
        self.socketPath = socketPath
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) {
            self.description = description
        }
    }

    /// Spawns `bundle`'s executable. On success the process runs and its end of the
    /// socketpair is closed in the daemon.
    ///
    /// The child is armed to receive SIGKILL when its parent dies, before it execs, so no
    /// app outlives a daemon that was killed, even a suspended one or one that never reached
    /// `Application.main`. Linux counts the spawning *thread* as the parent: the daemon
    /// calls this on its event loop thread, which ends only after shutdown has waited for
    /// (or killed) every app.
    package func launch(_ bundle: AppBundle, connection: PreparedAppConnection?) throws(SpawnError) -> any LaunchedProcess {
        try spawn(bundle, connection: connection)
    }

    package func prepareConnection(on loop: EventLoop) -> EventLoopFuture<PreparedAppConnection>? {
        PreparedAppConnection.make(on: loop, output: output?.prepareAhead())
    }

    /// For a caller without the supervisor, which hears a launched app's output once its
    /// launch has settled: this one hears it at once. Call it from a thread that lives as long
    /// as the app should (the app's death signal is tied to the spawning thread, as `launch`
    /// says): a Swift concurrency or Dispatch worker thread ends when it has been idle a
    /// while, and the app is then killed (seen: a child spawned from a worker was killed
    /// with SIGKILL after 25 s of idle).
    public func spawn(_ bundle: AppBundle) throws(SpawnError) -> AppProcess {
        let process = try spawn(bundle, connection: nil)
        process.hearOutput()
        return process
    }

    /// `spawn`, with the app's connection `connection` when one was prepared (on a failure
    /// it is discarded), else a socketpair made now.
    func spawn(_ bundle: AppBundle, connection: PreparedAppConnection?) throws(SpawnError) -> AppProcess {
        // Checked again at each launch: the file may have been replaced since registration
        // (by a symbolic link out of the bundle, say).
        do {
            try BundlePath.checkExecutable(of: bundle)
        } catch {
            connection?.discard()
            throw SpawnError(description: error.description)
        }
        let daemonEnd: Int32
        let appEnd: Int32
        if let connection {
            daemonEnd = connection.daemonFD
            appEnd = connection.takeAppEnd()
        } else {
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                throw SpawnError(description: "socketpair failed: \(String(cString: strerror(errno)))")
            }
            daemonEnd = fds[0]
            appEnd = fds[1]
        }
        let path = bundle.executablePath
        let own = [
            "LAUNCHSERVICES_APP_FD=3",
            daemonPIDVariable,
            "LAUNCHSERVICES_BUNDLE_ID=\(bundle.id)",
            "LAUNCHSERVICES_BUNDLE_PATH=\(bundle.path)",
            "LAUNCHSERVICES_SOCKET=\(socketPath)",
        ]
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let prepared = output?.prepare(bundleID: bundle.id, ahead: connection?.takeOutput())
        let rc = withCStrings([path]) { argv in
            baseStrings.with(own) { envp in
                ls_spawn_app_pidfd(&pid, &pidfd, path, argv, envp, appEnd, prepared?.stdout ?? -1, prepared?.stderr ?? -1)
            }
        }
        close(appEnd)
        let drain = prepared?.spawned(rc == 0)
        guard rc == 0 else {
            if let connection { connection.discard() } else { close(daemonEnd) }
            throw SpawnError(description: "\(path): \(String(cString: strerror(rc)))")
        }
        return AppProcess(bundleID: bundle.id, pid: pid, pidfd: pidfd, channelFD: daemonEnd, output: drain, prepared: connection?.channel)
    }
}

/// C strings made once and kept (the daemon's environment for every app it spawns), with
/// a NULL-terminated `char *[]` of them plus a few more for one call.
final class CStringArray: Sendable {
    // Written once in init, freed in deinit; only read between.
    nonisolated(unsafe) private let pointers: [UnsafeMutablePointer<CChar>?]

    init(_ strings: [String]) {
        pointers = strings.map { strdup($0) }
    }

    deinit { pointers.forEach { free($0) } }

    /// These strings, then `more`, then NULL, for the duration of `body`.
    func with<R>(_ more: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let extra = more.map { strdup($0) }
        defer { extra.forEach { free($0) } }
        let all = pointers + extra + [nil]
        return all.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// A NULL-terminated `char *[]` for the duration of `body`.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
