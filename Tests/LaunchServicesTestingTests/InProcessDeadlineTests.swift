#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// Deadline timers on the real daemon, in-process: each guards the launch or open it was
/// armed for, whatever else happens to the app meanwhile (a failed spawn, a relaunch).
extension InProcessLifecycleTests {
    @Test("a launch that fails, then a queued open's launch that succeeds: the new launch keeps its own deadline, and an app that never checks in is answered timeout at it")
    func noStaleLaunchTimer() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        // Every copy of notes starts but never says hello.
        daemon.behave(Self.notesID) { $0.checksIn = false }
        let clients = (1...3).map { _ in daemon.connect() }
        let first = clients[0].send(.open(url: "notes://1", annotation: nil))
        daemon.settle()
        #expect(daemon.launches(of: Self.notesID) == 1)
        // Two more opens queue behind the launch.
        let second = clients[1].send(.open(url: "notes://2", annotation: nil))
        let third = clients[2].send(.open(url: "notes://3", annotation: nil))
        #expect(clients[1].outcome(of: second) == nil)
        daemon.failNextLaunch(of: Self.notesID, reason: "/simulated/notes: Text file busy")

        // The first launch misses its 10 s deadline: killed. Its exit starts the second open,
        // whose launch fails; that starts the third, whose launch succeeds (and never checks in).
        daemon.advance(by: .milliseconds(10_100))
        let timedOut = try #require(clients[0].outcome(of: first))
        #expect(timedOut.error?.code == .timeout)
        #expect(timedOut.error?.phase == .launch)
        let failed = try #require(clients[1].outcome(of: second))
        #expect(failed.error?.code == .launchFailed)
        #expect(failed.error?.message.contains("Text file busy") == true, "\(failed)")
        #expect(daemon.launches(of: Self.notesID) == 2)
        #expect(clients[2].outcome(of: third) == nil, "launching")
        let relaunched = try #require(daemon.app(Self.notesID))
        #expect(relaunched.isAlive)

        // Its own launch deadline, 10 s from its spawn, ends it like the first.
        daemon.advance(by: .milliseconds(9_800))
        #expect(clients[2].outcome(of: third) == nil, "no answer before its deadline")
        daemon.advance(by: .milliseconds(400))
        let late = try #require(clients[2].outcome(of: third), "the relaunched app never checked in and was never timed out")
        #expect(late.error?.code == .timeout)
        #expect(late.error?.phase == .launch)
        #expect(!relaunched.isAlive)
        #expect(relaunched.events.last == .signaled(SIGKILL))
        #expect(daemon.state(of: Self.notesID) == .notRunning)
    }
}
