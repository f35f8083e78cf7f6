import CLaunchServicesShim
import LaunchServicesCore
#if canImport(Glibc)
import Glibc
#endif

/// Starts one desktop app process through the shim's waiter (`ls_desktop_launch`, see
/// desktop_launch.c for why a waiter and why a sibling): the app is never the daemon's
/// descendant, so it outlives the daemon and nothing it lets go is adopted by the daemon's
/// subreaper and ended at its stop.
///
/// Returns at once: what happened comes later on the report socket (`DesktopWaiterReports`).
/// The call itself is a fork of the daemon (page tables copied, no exec), done on the
/// caller's thread like the native apps' spawn.
enum DesktopSpawn {
    /// What the waiter was given; the daemon keeps `reportFD` (its end of the report socket)
    /// and `tailFD` (the stderr copy, or -1).
    struct Started {
        let waiterPID: Int32
        let reportFD: Int32
        let tailFD: Int32
        /// Whether the waiter is the daemon's sibling (see `ls_desktop_launch`).
        let sibling: Bool
    }

    /// The forwarder's command: everything on stdin to stdout and to fd 3.
    static func forwarderArguments(_ tee: String) -> [String] {
        [tee, "/dev/fd/3"]
    }

    static func start(path: String, argv: [String], environment: [String], directory: String?, pidVariableIndex: Int?,
                      output: DesktopOutput, forwarder: String?, graceMilliseconds: Int32) throws(DesktopLaunchFailure) -> Started {
        var sockets: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0 else {
            let code = errno
            output.closeDaemonCopies()
            if output.tailReadEnd >= 0 { close(output.tailReadEnd) }
            throw .system(stage: "socketpair", path: path, errno: code, reason: String(cString: strerror(code)))
        }
        _ = fcntl(sockets[0], F_SETFL, fcntl(sockets[0], F_GETFL) | O_NONBLOCK)
        var waiter: pid_t = 0
        var sibling: Int32 = 0
        // A forwarder needs its pipes; without one the app writes stderr to its destination.
        let useForwarder = forwarder != nil && output.forwarderInput >= 0
        let appStderr = useForwarder ? output.appStderr : output.stderrDestination
        let forwarderArgv = forwarder.map(forwarderArguments) ?? []
        let rc = withCStrings(argv) { argvPointer in
            withCStrings(environment) { envp in
                withCStrings(forwarderArgv) { forwarderPointer in
                    withOptionalCString(directory) { directoryPointer in
                        path.withCString { pathPointer in
                            (forwarder ?? "").withCString { forwarderPath in
                                var app = ls_desktop_process(
                                    path: pathPointer, argv: argvPointer, envp: envp,
                                    fds: (-1, output.appStdout, appStderr, -1),
                                    directory: directoryPointer, pid_env_index: Int32(pidVariableIndex ?? -1), ignore_sigpipe: 0)
                                var tee = ls_desktop_process(
                                    path: forwarderPath, argv: forwarderPointer, envp: envp,
                                    fds: (output.forwarderInput, output.stderrDestination, -1, output.forwarderTail),
                                    directory: nil, pid_env_index: -1, ignore_sigpipe: 1)
                                if useForwarder {
                                    return ls_desktop_launch(&app, &tee, output.stderrDestination, sockets[1], graceMilliseconds, &waiter, &sibling)
                                }
                                return ls_desktop_launch(&app, nil, output.stderrDestination, sockets[1], graceMilliseconds, &waiter, &sibling)
                            }
                        }
                    }
                }
            }
        }
        close(sockets[1])
        output.closeDaemonCopies()
        if !useForwarder, output.tailReadEnd >= 0 { close(output.tailReadEnd) }
        guard rc == 0 else {
            close(sockets[0])
            if useForwarder { close(output.tailReadEnd) }
            throw .system(stage: "spawn", path: path, errno: rc, reason: String(cString: strerror(rc)))
        }
        return Started(waiterPID: waiter, reportFD: sockets[0], tailFD: useForwarder ? output.tailReadEnd : -1, sibling: sibling != 0)
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }
}
