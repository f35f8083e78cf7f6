import LaunchServicesSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Where one desktop app's stdout and stderr go, and how the daemon sees the end of its
/// stderr, arranged so that nothing the app writes ever depends on the daemon being alive.
///
/// Native apps' output passes through the daemon (a pipe it drains into a log file) or goes
/// to journal streams. A desktop app outlives the daemon, and a pipe whose reader (the
/// daemon) is gone would end the app with SIGPIPE at its next warning. So the app writes only
/// to descriptors that live without the daemon:
/// - stdout: a journal stream (identifier: the application ID, priority info) under
///   systemd, else the app's log file `state/logs/DESKTOP-ID.log`, opened for append;
/// - stderr: a pipe to a forwarder process, `tee /dev/fd/3`, which writes everything to a
///   second journal stream (priority err) or to the same log file, and a copy to fd 3: a pipe
///   the daemon reads while it waits for the outcome, for the last lines of an app that
///   failed. The forwarder runs with SIGPIPE ignored, so when the daemon closes that copy
///   (the outcome is known, or the daemon is gone) it loses that output only and carries on.
///   It lives as long as the app's stderr is open, and is in the app's scope.
///
/// Without a forwarder (no `tee` found) stderr goes straight to its destination and
/// outcomes carry no stderr lines. With no output configured (`nil`, as in tests of the
/// launcher) the destinations are the daemon's own fd 1 and 2.
///
/// The log file is rotated (`NAME.1`) when it is over its size at a launch; it is not
/// rotated while an app runs, since the daemon no longer writes it.
struct DesktopOutput {
    var appStdout: Int32
    /// The app's fd 2: the forwarder's pipe, or the destination itself.
    var appStderr: Int32
    /// Where stderr ends up: the forwarder's stdout, and the app's own stderr if the
    /// forwarder cannot start.
    var stderrDestination: Int32
    /// The forwarder's stdin (the other end of `appStderr`) and its fd 3, when there is one.
    var forwarderInput: Int32 = -1
    var forwarderTail: Int32 = -1
    /// The daemon's end of the tail pipe, or -1.
    var tailReadEnd: Int32 = -1
    /// The daemon's copies to close once the waiter has its own.
    private var owned: [Int32] = []

    /// Opens what one launch needs. `journalIdentifier` names its journal entries,
    /// `fileName` its log file (a desktop file ID: no `/`). Never fails: what cannot be
    /// opened falls back to the daemon's own descriptors (logged by the caller through
    /// `problems`).
    static func prepare(_ output: AppOutput?, journalIdentifier: String, fileName: String, forwarder: Bool, problems: inout [String]) -> DesktopOutput {
        var prepared = DesktopOutput(appStdout: 1, appStderr: 2, stderrDestination: 2)
        switch output {
        case .journal:
            let out = JournalStream.open(identifier: journalIdentifier, priority: 6, levelPrefix: true)
            let err = JournalStream.open(identifier: journalIdentifier, priority: 3, levelPrefix: true)
            if let out, let err {
                prepared.appStdout = out
                prepared.stderrDestination = err
                prepared.owned += [out, err]
            } else {
                for fd in [out, err].compactMap({ $0 }) { close(fd) }
                problems.append("journald takes no stream now; the app's output goes to the daemon's own")
            }
        case .files(let folder, let maximumBytes):
            if let fd = openLogFile(folder: folder, name: fileName, maximumBytes: maximumBytes, problems: &problems) {
                prepared.appStdout = fd
                prepared.stderrDestination = fd
                prepared.owned.append(fd)
            }
        case nil:
            break
        }
        prepared.appStderr = prepared.stderrDestination
        guard forwarder else { return prepared }
        var stderrPipe: [Int32] = [-1, -1]
        var tailPipe: [Int32] = [-1, -1]
        // Every spawn closes what it does not hand on, so the moment before FD_CLOEXEC is harmless.
        guard pipe(&stderrPipe) == 0 else {
            problems.append("pipe: \(String(cString: strerror(errno))); the app's stderr is not kept")
            return prepared
        }
        guard pipe(&tailPipe) == 0 else {
            problems.append("pipe: \(String(cString: strerror(errno))); the app's stderr is not kept")
            close(stderrPipe[0])
            close(stderrPipe[1])
            return prepared
        }
        for fd in stderrPipe + tailPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        prepared.forwarderInput = stderrPipe[0]
        prepared.appStderr = stderrPipe[1]
        prepared.forwarderTail = tailPipe[1]
        prepared.tailReadEnd = tailPipe[0]
        prepared.owned += [stderrPipe[0], stderrPipe[1], tailPipe[1]]
        return prepared
    }

    /// After the waiter was made (or failed to be): closes the daemon's copies. The tail's
    /// read end stays, the caller's to read and close.
    func closeDaemonCopies() {
        for fd in owned { close(fd) }
    }

    /// `folder/NAME.log` for append, created owner-only; moved to `NAME.log.1` first when
    /// over `maximumBytes`.
    static func openLogFile(folder: String, name: String, maximumBytes: Int, problems: inout [String]) -> Int32? {
        guard AppLogFile.isSafeName(name) else {
            problems.append("\(name) cannot name a log file; the app's output goes to the daemon's own")
            return nil
        }
        makeFolders(folder)
        let path = folder + "/" + name + ".log"
        var info = stat()
        if stat(path, &info) == 0, Int(info.st_size) > maximumBytes {
            _ = rename(path, path + ".1")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            problems.append("\(path): \(String(cString: strerror(errno))); the app's output goes to the daemon's own")
            return nil
        }
        return fd
    }

    private static func makeFolders(_ folder: String) {
        var prefix = ""
        for component in folder.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            _ = mkdir(prefix, 0o700)
        }
    }
}
