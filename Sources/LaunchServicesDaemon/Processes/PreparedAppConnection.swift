#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix

/// An app's connection made before the launch that uses it: a socketpair whose daemon end
/// is already a channel on the loop (its pipeline still empty), and whose other end becomes
/// the app's fd 3; with it, when app output goes to files, the log pipe that becomes the
/// app's fd 1 and 2 (`AppOutput.prepareAhead`).
///
/// Why ahead: adopting a socket into SwiftNIO (the channel, its options, its registration)
/// costs about as much as the spawn itself, and done at launch it ran while the new app
/// waited for the CPU. Made while the daemon is idle, a launch only adds the connection's
/// handler. Confined to the loop; the supervisor holds at most one (`ProcessSupervisor`).
package final class PreparedAppConnection {
    /// The daemon's end, adopted; the launch adds its handler (`ConnectionHandler`, which
    /// then sees a channel already active).
    let channel: Channel
    /// The channel's descriptor: the launch writes its prelude straight into it, before the
    /// channel has anything of its own to write.
    let daemonFD: Int32
    /// The app's end, until a launch takes it (then the launch closes it after the spawn).
    private var appEnd: Int32
    /// The app's output pipe, until a launch takes it; nil when none was made ahead.
    private var output: PreparedOutput?

    private init(channel: Channel, daemonFD: Int32, appEnd: Int32, output: PreparedOutput?) {
        self.channel = channel
        self.daemonFD = daemonFD
        self.appEnd = appEnd
        self.output = output
    }

    /// Makes one on `loop`, with `output` (discarded if the connection cannot be made);
    /// fails when the socketpair cannot be made (descriptors run out) or SwiftNIO cannot
    /// adopt it.
    static func make(on loop: EventLoop, output: PreparedOutput? = nil) -> EventLoopFuture<PreparedAppConnection> {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            let code = errno
            output?.discard()
            return loop.makeFailedFuture(AppLauncher.SpawnError(description: "socketpair failed: \(String(cString: strerror(code)))"))
        }
        let daemonEnd = fds[0], appEnd = fds[1]
        let adopted = ClientBootstrap(group: loop).withConnectedSocket(daemonEnd)
        adopted.whenFailure { _ in
            close(appEnd)
            output?.discard()
        }
        return adopted.map { PreparedAppConnection(channel: $0, daemonFD: daemonEnd, appEnd: appEnd, output: output) }
    }

    /// The app's end, for the spawn: the caller closes it once the app has its copy. Taken once.
    func takeAppEnd() -> Int32 {
        let fd = appEnd
        appEnd = -1
        return fd
    }

    /// The app's output pipe made ahead, for the spawn (`AppOutput.prepare`). Taken once.
    func takeOutput() -> PreparedOutput? {
        defer { output = nil }
        return output
    }

    /// Closes both ends, and the output pipe if no launch took it: a launch that failed, or
    /// the daemon stopping.
    func discard() {
        if appEnd >= 0 { close(takeAppEnd()) }
        takeOutput()?.discard()
        channel.close(promise: nil)
    }
}
