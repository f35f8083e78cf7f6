import CLaunchServicesShim
import Foundation
import LaunchServicesSystemd
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where launched apps' stdout and stderr go (`appLogs` in the configuration).
public struct AppLogSettings: Sendable, Equatable {
    /// A log file's largest size in bytes; past it the file becomes `ID.log.1` (replacing
    /// the previous one) and a new `ID.log` begins, so an app keeps at most twice this.
    public var maximumBytes = 1 << 20
    /// `auto`: the journal when the daemon runs under systemd and journald takes streams,
    /// else files; `files`: always files.
    public var destination = "auto"

    public init() {}

    public static let destinations = ["auto", "files"]
}

/// Where app output goes, decided once at start: journald streams, or one log file per app
/// under `folder` filled through a pipe the daemon drains.
public enum AppOutput: Sendable, Equatable {
    case journal
    case files(folder: String, maximumBytes: Int)

    /// The journal when the daemon is a systemd service (supervised, or its stderr is the
    /// journal) and journald accepts a stream; otherwise files in `stateFolder/logs`.
    public static func choose(_ settings: AppLogSettings, stateFolder: String) -> AppOutput {
        if settings.destination == "auto", SystemdNotifier.isSupervised || JournalLogHandler.stderrIsJournal, JournalStream.isReachable {
            return .journal
        }
        return .files(folder: stateFolder + "/logs", maximumBytes: settings.maximumBytes)
    }

    /// What `status` reports as `appLogs`: `journal`, or the folder of the log files.
    public var report: String {
        switch self {
        case .journal: return "journal"
        case .files(let folder, _): return folder
        }
    }

    /// The descriptors to give one app as its fd 1 and 2, and what to do with them once it
    /// is spawned: `ahead` (made by `prepareAhead`, while nothing launched) when there is
    /// one, else made now. `nil` when none can be made: the app then inherits the daemon's own.
    func prepare(bundleID: String, ahead: PreparedOutput? = nil) -> PreparedOutput? {
        switch self {
        case .journal:
            // (A journal stream carries the app's name in its header: none is made ahead.)
            ahead?.discard()
            guard let out = JournalStream.open(identifier: bundleID, priority: 6, levelPrefix: true) else { return nil }
            guard let err = JournalStream.open(identifier: bundleID, priority: 3, levelPrefix: true) else {
                close(out)
                return nil
            }
            return PreparedOutput(stdout: out, stderr: err, drain: nil)
        case .files(let folder, _):
            guard AppLogFile.isSafeName(bundleID) else {
                ahead?.discard()
                return nil
            }
            guard let output = ahead ?? prepareAhead() else { return nil }
            output.drain?.name(folder + "/" + bundleID + ".log")
            return output
        }
    }

    /// A log pipe for the next app launched, made before its launch: the pipe, its size and
    /// its drain's registration cost about as much as the executable's check, and made at
    /// launch they ran while the new app waited for the CPU. Its drain is named by
    /// `prepare(bundleID:ahead:)`. `nil` for the journal (a stream is made for its app).
    func prepareAhead() -> PreparedOutput? {
        guard case .files(_, let maximumBytes) = self else { return nil }
        var fds: [Int32] = [-1, -1]
        guard ls_pipe_cloexec(&fds) == 0 else { return nil }
        // Room for what an app prints while its drain rests (`AppLogDrain.rest`); Linux
        // lets an unprivileged process ask for up to 1 MiB. Pages are taken only as filled.
        _ = fcntl(fds[0], 1031 /* F_SETPIPE_SZ */, AppLogDrain.pipeBytes)
        // Draining before the spawn: a watch the kernel refuses leaves the app the daemon's
        // own output, never a pipe nobody reads (or one already closed, whose first write
        // would kill the app with SIGPIPE).
        // Not heard yet: a launching app's first lines wake no thread (`AppProcess.hearOutput`).
        guard let drain = AppLogDrain.start(readEnd: fds[0], maximumBytes: maximumBytes, heard: false) else {
            close(fds[1])
            return nil
        }
        return PreparedOutput(stdout: fds[1], stderr: fds[1], drain: drain)
    }
}

/// One app's output descriptors between creation and spawn.
struct PreparedOutput {
    let stdout: Int32
    let stderr: Int32
    /// The drain of the pipe behind `stdout` (files only), registered with the app watch
    /// thread but not heard yet (`AppProcess.hearOutput`).
    let drain: AppLogDrain?

    /// After spawn (or a failed one): closes the daemon's copies of the app's ends. The drain
    /// goes on while the app runs; after a failed spawn no writer is left, and the drain ends
    /// at the end of file that makes.
    func spawned(_ ok: Bool) -> AppLogDrain? {
        close(stdout)
        if stderr != stdout { close(stderr) }
        return ok ? drain : nil
    }

    /// Never given to an app (the daemon stopping, a spawn that did not happen): the
    /// descriptors are closed, and the drain ends at the end of file that makes.
    func discard() {
        _ = spawned(false)
    }
}

/// A per-app log file, rotated to `PATH.1` when a write would take it past `maximumBytes`.
/// Used only by its drain, under the drain's lock.
final class AppLogFile {
    /// Empty for a pipe made ahead of its app's launch, until it is named: nothing it reads
    /// before then (there is no writer but the daemon) is written anywhere.
    var path: String
    let maximumBytes: Int
    private var fd: Int32 = -1
    private var size = 0

    init(path: String, maximumBytes: Int) {
        self.path = path
        self.maximumBytes = maximumBytes
    }

    /// Bundle ids become file names: nothing that could leave the folder.
    /// (Bytes, not Foundation's `contains(_:)` for strings: this runs at every spawn, on the
    /// loop, and that search cost ten thousand instructions a launch.)
    static func isSafeName(_ id: String) -> Bool {
        !id.isEmpty && id != "." && id != ".." && !id.utf8.contains { $0 == UInt8(ascii: "/") || $0 == 0 }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !path.isEmpty else { return }
        if fd < 0 { openFile() }
        guard fd >= 0 else { return }
        if size > 0, size + bytes.count > maximumBytes {
            Glibc.close(fd)
            fd = -1
            _ = rename(path, path + ".1")
            openFile(truncate: true)
            guard fd >= 0 else { return }
        }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
            size += n
        }
    }

    /// Opens the file, making its folder only when it is missing (the folder's name was
    /// worked out, with Foundation, at every launch: a quarter of the daemon's work per spawn).
    private func openFile(truncate: Bool = false) {
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (truncate ? O_TRUNC : 0)
        fd = open(path, flags, 0o600)
        if fd < 0 && errno == ENOENT {
            let folder = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            fd = open(path, flags, 0o600)
        }
        var st = stat()
        size = fd >= 0 && fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

/// Drains one app's output pipe into its log file on the app watch thread (never the event
/// loop): reads of at most `chunk` bytes into one fixed buffer, each written before the next
/// read, so the daemon holds no more than that per app; a slow disk makes the app's writes
/// wait (the pipe fills) instead of growing memory.
///
/// After a drain that found output the registration rests for `rest` before it listens
/// again, so an app that prints a line per open costs one read and one write per rest, not a
/// wake-up per line (a quarter of the daemon's CPU at 10,000 opens/s, when each line woke two
/// threads). The pipe (`pipeBytes`, when the kernel grants it) holds what arrives meanwhile,
/// up to 100 MB/s; lines reach the file at most `rest` late. One drain reads at most
/// `pipeBytes`, so an app that never stops printing cannot hold the thread from the others.
final class AppLogDrain: AppWatched {
    static let rest: UInt64 = 10_000_000
    static let pipeBytes: Int32 = 1 << 20
    private let readEnd: Int32
    /// `rest`, or another length for a test.
    private let restNanoseconds: UInt64
    /// What a drain changes. After `start` only the watch thread touches it, but for the
    /// loop naming the file once (`name`), before the app that writes to the pipe exists:
    /// the lock is hardly ever contended; it lets the compiler check that nothing else does.
    private let state: Mutex<State>

    private struct State: ~Copyable {
        let file: AppLogFile
        let buffer: UnsafeMutableRawBufferPointer
        var finished = false
    }

    /// Starts draining `readEnd` (closed when the drain ends) into the file at `path`, which
    /// is made only when something is written (`path` empty: named later, by `name`, for a
    /// pipe made ahead of its app's launch); `nil` (the descriptor closed) when the watch
    /// thread cannot take it. `heard` false: what the pipe holds is read only from `hear` on
    /// (or at the app's exit, or at end of file).
    static func start(readEnd: Int32, path: String = "", maximumBytes: Int, rest: UInt64 = AppLogDrain.rest, heard: Bool = true) -> AppLogDrain? {
        let drain = AppLogDrain(readEnd: readEnd, path: path, maximumBytes: maximumBytes, rest: rest)
        guard AppWatchThread.shared.add(readEnd, drain, heard: heard) else {
            drain.removed()
            return nil
        }
        return drain
    }

    private init(readEnd: Int32, path: String, maximumBytes: Int, rest: UInt64) {
        self.readEnd = readEnd
        self.restNanoseconds = rest
        let file = AppLogFile(path: path, maximumBytes: maximumBytes)
        // A pipe's read end has no status flags but its access mode, which F_SETFL ignores.
        _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        state = Mutex(State(file: file, buffer: .allocate(byteCount: min(64 * 1024, max(file.maximumBytes, 512)), alignment: 1)))
    }

    /// Names the log file of a drain started without one (made ahead of its app's launch),
    /// before the app can write to the pipe.
    func name(_ path: String) {
        state.withLock { $0.file.path = path }
    }

    /// Starts reading the pipe (a drain started with `heard` false).
    func hear() {
        AppWatchThread.shared.hear(self)
    }

    func readable(on thread: AppWatchThread) -> AppWatchNext {
        state.withLock { state in
            let found = drain(&state)
            if state.finished { return .stop }
            return found ? .rest(nanoseconds: restNanoseconds) : .keep
        }
    }

    func removed() {
        Glibc.close(readEnd)
        state.withLock { state in
            state.finished = true
            state.file.close()
            state.buffer.deallocate()
        }
    }

    /// Reads what is there (at most `pipeBytes`); at end of file (every writer gone) or on a
    /// read error marks the drain finished. True if it read any.
    @discardableResult
    private func drain(_ state: inout State) -> Bool {
        guard !state.finished else { return false }
        var found = false
        var taken = 0
        while taken < Int(Self.pipeBytes) {
            let n = read(readEnd, state.buffer.baseAddress, state.buffer.count)
            if n > 0 {
                state.file.write(UnsafeRawBufferPointer(rebasing: state.buffer[0..<n]))
                found = true
                taken += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            // End of file, or an error other than "nothing there now": the pipe is done (a
            // descriptor that stays readable in error would otherwise wake the thread for ever).
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { state.finished = true }
            return found
        }
        return found
    }

    /// The app has exited (called on the watch thread, by its exit's handler): takes what it
    /// left in the pipe, then closes the read end (a process the app started and that still
    /// writes there then gets EPIPE).
    func finish(on thread: AppWatchThread) {
        // One drain: the pipe holds at most `pipeBytes`, all the app could leave in it.
        state.withLock { state in _ = drain(&state) }
        thread.stop(self)
    }
}
