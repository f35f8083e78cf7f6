import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import LaunchServicesDaemon
import Testing

/// Who a peer's pid is, read from procfs: an ended process is never the user, whatever
/// still holds the connection it made.
@Suite("Process ancestry")
struct ProcessAncestryTests {
    /// The pid of a child that has run and been reaped: it names no process now.
    private func endedPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("an ended process is .gone, not the user")
    func endedIsGone() throws {
        let pid = try endedPID()
        #expect(ProcessAncestry.statFields(of: pid) == nil, "pid \(pid) was reused already")
        #expect(ProcessAncestry.origin(of: pid, daemon: getpid()) { _ in nil } == .gone)
    }

    @Test("a live process: itself an app, below the daemon an orphan, else the user")
    func liveProcess() {
        let me = getpid(), parent = getppid()
        #expect(ProcessAncestry.origin(of: me, daemon: 0) { $0 == me ? "test.me" : nil } == .app("test.me"))
        #expect(ProcessAncestry.origin(of: me, daemon: 0) { $0 == parent ? "test.parent" : nil } == .app("test.parent"))
        #expect(ProcessAncestry.origin(of: me, daemon: parent) { _ in nil } == .orphanOfApp)
        #expect(ProcessAncestry.origin(of: me, daemon: 0) { _ in nil } == .user)
    }
}
