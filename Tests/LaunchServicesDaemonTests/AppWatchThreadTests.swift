import CLaunchServicesShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import Synchronization
import Testing

/// The app watch thread: a registration hears its descriptor, rests when asked (no call
/// while disarmed, one after), is forgotten once stopped; and an exit's handler has put what
/// the app printed in its log before it reports the exit.
@Suite("App watch thread")
struct AppWatchThreadTests {
    /// Records each call; answers `readable` with the next planned step (then `.keep`).
    final class Recorder: AppWatched, @unchecked Sendable {
        let fd: Int32
        private let lock = Mutex<(calls: [UInt64], removed: Int, plan: [AppWatchNext])>(([], 0, []))
        init(fd: Int32, plan: [AppWatchNext]) {
            self.fd = fd
            lock.withLock { $0.plan = plan }
        }
        func readable(on thread: AppWatchThread) -> AppWatchNext {
            var byte = [UInt8](repeating: 0, count: 64)
            while read(fd, &byte, byte.count) > 0 {}
            return lock.withLock { state in
                state.calls.append(AppWatchThread.monotonicNanoseconds())
                return state.plan.isEmpty ? .keep : state.plan.removeFirst()
            }
        }
        func removed() { lock.withLock { $0.removed += 1 } }
        var calls: [UInt64] { lock.withLock { $0.calls } }
        var removedCount: Int { lock.withLock { $0.removed } }
    }

    private func pipePair() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (fds[0], fds[1])
    }

    /// A child spawned from a thread of its own, which lives until `finish`: the child's
    /// death signal (`PR_SET_PDEATHSIG`, set by the spawn) is tied to the spawning *thread*,
    /// and the Swift concurrency worker an async test runs on may end while the test awaits,
    /// which would kill the child with SIGKILL in the middle of the test.
    final class SpawnedOnOwnThread: @unchecked Sendable {
        private(set) var rc: Int32 = -1
        private(set) var pid: pid_t = 0
        private(set) var pidfd: Int32 = -1
        private let ended = DispatchSemaphore(value: 0)

        init(_ script: String, output: Int32 = -1) {
            let spawned = DispatchSemaphore(value: 0)
            Thread { [self] in
                let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(script), nil]
                let envp: [UnsafeMutablePointer<CChar>?] = [nil]
                var pid: pid_t = 0
                var pidfd: Int32 = -1
                rc = ls_spawn_app_pidfd(&pid, &pidfd, "/bin/sh", argv, envp, -1, output, output)
                self.pid = pid
                self.pidfd = pidfd
                argv.forEach { free($0) }
                spawned.signal()
                ended.wait()
            }.start()
            spawned.wait()
        }

        /// Lets the spawning thread end (once the child is gone, or killed).
        func finish() { ended.signal() }
    }

    /// Waits (at most 20 s) until `condition` holds; on a timeout the failure names `what`
    /// and whatever `state` says then.
    private func eventually(_ what: String = "the condition", state: () -> String = { "" }, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            if ContinuousClock.now >= deadline {
                let described = state()
                throw HarnessFailure("timed out after 20 s waiting for \(what)\(described.isEmpty ? "" : "; \(described)")")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test("a rest: nothing heard while disarmed, the bytes written meanwhile heard once it ends")
    func restThenHearAgain() async throws {
        let (readEnd, writeEnd) = try pipePair()
        defer { close(readEnd); close(writeEnd) }
        // Long enough that, however late this test's own steps run on a loaded machine,
        // the second byte is written within the rest.
        let rest: UInt64 = 1_500_000_000
        let recorder = Recorder(fd: readEnd, plan: [.rest(nanoseconds: rest), .stop])
        #expect(AppWatchThread.shared.add(readEnd, recorder))
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        try await eventually { recorder.calls.count == 1 }
        _ = write(writeEnd, &byte, 1)
        try await eventually { recorder.calls.count == 2 }
        let calls = recorder.calls
        #expect(calls[1] - calls[0] >= rest, "a disarmed registration was heard during its rest")
        try await eventually { recorder.removedCount == 1 }
        _ = write(writeEnd, &byte, 1)
        try await Task.sleep(for: .milliseconds(30))
        #expect(recorder.calls.count == 2, "a stopped registration was heard")
        #expect(recorder.removedCount == 1)
    }

    @Test("registered unheard (a launching app's log pipe): bytes waiting are not heard until `hear`, then at once; a hang-up is heard meanwhile; `hear` after the registration is gone does nothing")
    func unheardUntilHear() async throws {
        let (readEnd, writeEnd) = try pipePair()
        defer { close(readEnd); close(writeEnd) }
        let recorder = Recorder(fd: readEnd, plan: [.stop])
        #expect(AppWatchThread.shared.add(readEnd, recorder, heard: false))
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.calls.isEmpty, "a registration made unheard was heard")
        AppWatchThread.shared.hear(recorder)
        try await eventually { recorder.calls.count == 1 }
        try await eventually { recorder.removedCount == 1 }
        AppWatchThread.shared.hear(recorder)
        #expect(recorder.calls.count == 1)

        let (otherRead, otherWrite) = try pipePair()
        defer { close(otherRead) }
        let hangUp = Recorder(fd: otherRead, plan: [.stop])
        #expect(AppWatchThread.shared.add(otherRead, hangUp, heard: false))
        close(otherWrite)
        try await eventually { hangUp.calls.count == 1 }
        // Forgotten by the thread before its descriptor is closed here (a number closed
        // first could be reused by a test running beside this one, and lose its registration).
        try await eventually { hangUp.removedCount == 1 }
    }

    @Test("an exit is reported after the app's last lines are in its log")
    func exitAfterLastLines() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("appwatch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/go"
        try #require(mkfifo(fifo, 0o600) == 0)
        let (readEnd, writeEnd) = try pipePair()
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        // A first line, which the drain reads before it rests (here for 5 s); then, once the
        // test has seen that line in the file, the others and the exit, within the rest: what
        // is still in the pipe when the exit is heard must be in the file when it is reported.
        let script = "echo line-0; read go < '\(fifo)'; printf 'line-%d\\n' $(seq 1 1999); exit 7"
        let spawner = SpawnedOnOwnThread(script, output: writeEnd)
        defer { spawner.finish() }
        let rc = spawner.rc
        pid = spawner.pid
        pidfd = spawner.pidfd
        // Kept open here, as a process the app started would keep it: the app's exit then
        // does not end the pipe, so only the exit's handler can take the last lines (at end
        // of file the drain would wake by itself, even while it rests).
        defer { close(writeEnd) }
        try #require(rc == 0)
        let path = folder + "/test.log"
        let drain = try #require(AppLogDrain.start(readEnd: readEnd, path: path, maximumBytes: 1 << 24, rest: 5_000_000_000))
        let process = AppProcess(bundleID: "test.watch", pid: pid, pidfd: pidfd, output: drain)
        let heard = Mutex<(status: LaunchServicesCore.ExitStatus?, lines: Int)>((nil, 0))
        // A failure before the script is let go must not leave it waiting on its FIFO.
        defer { if heard.withLock({ $0.status == nil }) { kill(pid, SIGKILL) } }
        process.watchExit { status in
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            heard.withLock { $0 = (status, text.split(separator: "\n").count) }
        }
        // What a timeout says: whether the script still runs (and in which state), what the
        // log holds, and whether its exit was heard.
        func state() -> String {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)).map { String($0.prefix(60)) } ?? "no /proc entry"
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return "script pid \(pid): \(stat); the log holds \(text.utf8.count) bytes; exit heard: \(String(describing: heard.withLock { $0.status }))"
        }
        try await eventually("line-0 in the log", state: state) { ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").hasPrefix("line-0\n") }
        // The script opens the FIFO for reading right after its first line: until then a
        // non-blocking open for writing fails with ENXIO.
        var go: Int32 = -1
        var openError: Int32 = 0
        try await eventually("the script to open its FIFO", state: { "open: errno \(openError); " + state() }) {
            go = open(fifo, O_WRONLY | O_NONBLOCK)
            openError = go < 0 ? errno : 0
            return go >= 0
        }
        _ = write(go, "\n", 1)
        close(go)
        try await eventually("the exit to be heard", state: state) { heard.withLock { $0.status != nil } }
        #expect(heard.withLock { $0.status } == .exited(7))
        #expect(heard.withLock { $0.lines } == 2000)
    }

    @Test("after an app's exit is heard, its process object's pidfd is still its own: a signal sent through it finds the process gone (ESRCH), never a reused descriptor")
    func pidfdKeptUntilReleased() async throws {
        let spawner = SpawnedOnOwnThread("exit 3")
        defer { spawner.finish() }
        try #require(spawner.rc == 0)
        var process: AppProcess? = AppProcess(bundleID: "test.pidfd", pid: spawner.pid, pidfd: spawner.pidfd)
        weak let released = process
        let heard = Mutex<LaunchServicesCore.ExitStatus?>(nil)
        process?.watchExit { status in heard.withLock { $0 = status } }
        try await eventually("the exit to be heard") { heard.withLock { $0 } != nil }
        #expect(heard.withLock { $0 } == .exited(3))
        // The watch thread forgets the registration right after reporting the exit; the
        // supervisor may still signal the app (a deadline, a suspension) until the loop
        // has heard of it.
        try await eventually("the exit's registration to be forgotten") { process.map { !AppWatchThread.shared.isWatchingExit(of: $0) } ?? true }
        let pidfd = try #require(process?.pidfd)
        let rc = ls_pidfd_send_signal(pidfd, 0)
        let code = errno
        #expect(rc == -1)
        #expect(code == ESRCH, "signalling through the exited app's pidfd gave errno \(code), not ESRCH: its descriptor was closed (and its number free for another)")
        // Once nothing holds the process (the watch thread neither), it is released, and
        // with it its pidfd.
        process = nil
        try await eventually("the process object to be released") { released == nil }
    }
}
