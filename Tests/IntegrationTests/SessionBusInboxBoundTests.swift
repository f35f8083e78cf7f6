import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The bus thread's own bound: it holds at most 1,024 incoming calls not yet answered, over
/// all senders together (each sender is held to 64 before that, by the loop). A flood from
/// many senders, none past its own 64, is answered by name past the 1,024th; the daemon
/// neither crashes nor stops serving, and answers again once the held calls are answered.
@Suite("Session bus inbox bound", .serialized)
struct SessionBusInboxBoundTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath
    static let bound = 1024
    static let boundMessage = "launchservicesd holds 1024 D-Bus calls not yet answered, its limit; try again when some are answered"
    /// 20 senders × 60 calls: 1,200 calls, 176 past the bound; no sender reaches 64.
    static let senders = 20, callsPerSender = 60

    /// Python's dbus bindings, `senders` connections of one process (each its own unique
    /// name), each sending `each` `Open(["slow:S-I"])` at once. Every answer, as
    /// `[S, I, errorName, message]`, is in the JSON file argv[4] (rewritten every 20 ms
    /// while answers come) until the file argv[5] exists (at most 300 s).
    static let flood = """
        import dbus, json, os, sys
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        address, name, path, state, trigger = sys.argv[1:6]
        senders, each = int(sys.argv[6]), int(sys.argv[7])
        answers = []
        written = [-1]
        def answered(s, i, error=None):
            answers.append([s, i, error.get_dbus_name() if error else None, error.get_dbus_message() if error else None])
        buses = [dbus.bus.BusConnection(address) for _ in range(senders)]
        for s, bus in enumerate(buses):
            app = dbus.Interface(bus.get_object(name, path, introspect=False), "org.freedesktop.Application")
            for i in range(each):
                app.Open(["slow:%d-%d" % (s, i)], dbus.Dictionary({}, signature="sv"), timeout=300,
                         reply_handler=lambda s=s, i=i: answered(s, i), error_handler=lambda e, s=s, i=i: answered(s, i, e))
        loop = GLib.MainLoop()
        def tick():
            if written[0] != len(answers):
                with open(state + ".tmp", "w") as f:
                    json.dump(answers, f)
                os.rename(state + ".tmp", state)
                written[0] = len(answers)
            if os.path.exists(trigger):
                loop.quit()
                return False
            return True
        GLib.timeout_add(20, tick)
        GLib.timeout_add_seconds(300, loop.quit)
        loop.run()
        """

    static func answers(_ file: String) -> [[Any]] {
        guard let data = FileManager.default.contents(atPath: file) else { return [] }
        return (try? JSONSerialization.jsonObject(with: data) as? [[Any]]) ?? []
    }

    /// A daemon on a private bus with `slow` (its first copy hangs in its first open, so
    /// every later open waits; copies after it answer) and `fast`. The open deadline is
    /// long: no held call is answered by it while the test floods.
    static func daemon(on bus: PrivateSessionBus) throws -> DaemonHarness {
        let h = try DaemonHarness(apps: [.test("slow", "--open=hang-first"), .test("fast")], config: #"{"deadlines": {"launch": 20, "openURL": 240}}"#,
                                  environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(name) on the session bus") }
        return h
    }

    static func gdbusOpen(_ url: String, on bus: PrivateSessionBus) throws -> ToolRun {
        try bus.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", name, "--object-path", path,
                                       "--method", "org.freedesktop.Application.Open", "['\(url)']", "{}"])
    }

    /// Starts the flood; waits until every call past the bound is answered and the other
    /// 1,024 wait on `slow`.
    static func startFlood(on bus: PrivateSessionBus, _ h: DaemonHarness) throws -> (process: ChildProcess, state: String, trigger: String) {
        let state = bus.root + "/flood.json", trigger = bus.root + "/flood.done", script = bus.root + "/flood.py"
        try flood.write(toFile: script, atomically: true, encoding: .utf8)
        let process = try ChildProcess(PrivateSessionBus.python, [script, bus.address, name, path, state, trigger, "\(senders)", "\(callsPerSender)"],
                                       environment: bus.environment, stdout: bus.root + "/flood.out")
        let past = senders * callsPerSender - bound
        do {
            try waitUntil("\(past) calls past the bound are answered", within: 120) { answers(state).count >= past }
            try waitUntil("slow holds the other \(bound) opens", within: 60) {
                try h.running().first { $0.id == "test.slow" }?.pendingOpens == bound
            }
        } catch {
            process.stop()
            throw error
        }
        return (process, state, trigger)
    }

    @Test("1,200 Open calls from 20 senders (60 each, under the 64 per sender): 1,024 are held, the 176 past them are Error.Unavailable naming the bound; the socket serves meanwhile; once the held calls are answered, the bus is served again")
    func floodPastTheBound() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try Self.daemon(on: bus)
        defer { h.stop() }
        let flood = try Self.startFlood(on: bus, h)
        defer {
            #expect(FileManager.default.createFile(atPath: flood.trigger, contents: nil), "the trigger file \(flood.trigger) is written")
            if flood.process.wait(timeout: 10) == nil { flood.process.stop() }
        }

        let refused = Self.answers(flood.state)
        #expect(refused.count == Self.senders * Self.callsPerSender - Self.bound, "only the calls past the bound are answered: \(refused.count)")
        for answer in refused {
            #expect(answer[2] as? String == "org.swift_launch_services.LaunchServices.Error.Unavailable", "\(answer)")
            #expect(answer[3] as? String == Self.boundMessage, "\(answer)")
        }
        #expect(!h.daemonOutput.contains("calls waiting"), "no sender reached its own limit")

        // Held at the bound: another sender is answered at once, by name; the socket serves.
        let meanwhile = try Self.gdbusOpen("fast:meanwhile", on: bus)
        #expect(meanwhile.status != 0 && meanwhile.stderr.contains("org.swift_launch_services.LaunchServices.Error.Unavailable")
                && meanwhile.stderr.contains("holds 1024 D-Bus calls"), "\(meanwhile.stdout) \(meanwhile.stderr)")
        #expect(try h.lsopen("fast:over-the-socket").status == 0)
        #expect(!h.eventNames().contains { $0.hasPrefix("open url=fast:meanwhile ") })

        // The hung copy ends: every held call is answered (once), and the bus is served again.
        let slow = try #require(try h.running().first { $0.id == "test.slow" }?.pid)
        kill(slow, SIGKILL)
        try waitUntil("every call of the flood is answered", within: 120) {
            Self.answers(flood.state).count >= Self.senders * Self.callsPerSender
        }
        let all = Self.answers(flood.state)
        let calls = Set(all.map { "\($0[0])-\($0[1])" })
        #expect(all.count == Self.senders * Self.callsPerSender && calls.count == all.count, "each call answered once: \(all.count) answers, \(calls.count) calls")
        let late = all.dropFirst(refused.count).filter { $0[3] as? String == Self.boundMessage }
        #expect(late.isEmpty, "a held call was answered as past the bound: \(late.prefix(3))")
        let after = try Self.gdbusOpen("fast:after", on: bus)
        #expect(after.status == 0, "\(after.stdout) \(after.stderr)")
        try waitUntil("fast has the URL", within: 20) { h.eventNames().contains { $0.hasPrefix("open url=fast:after ") } }
        #expect(isAlive(h.daemonPID))
    }

    @Test("senders that leave the bus while 1,024 of their calls are held free the bound: once the hung app ends, another sender is answered")
    func leftSendersFreeTheBound() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try Self.daemon(on: bus)
        defer { h.stop() }
        let flood = try Self.startFlood(on: bus, h)
        defer { flood.process.stop() }

        // The 20 senders leave at once (their process killed), their calls still held.
        kill(flood.process.pid, SIGKILL)
        flood.process.stop()
        try waitUntil("the daemon saw the senders leave", within: 30) {
            try h.running().first { $0.id == "test.slow" }?.pendingOpens ?? 0 < Self.bound
        }
        let slow = try #require(try h.running().first { $0.id == "test.slow" }?.pid)
        kill(slow, SIGKILL)
        try waitUntil("slow holds no open", within: 60) { try h.running().first { $0.id == "test.slow" }?.pendingOpens ?? 0 == 0 }

        let after = try Self.gdbusOpen("fast:after-leave", on: bus)
        // A departed sender's calls are answered when it leaves (`DBusCaller.leave`), so the
        // bus thread lets go of them and the bound is free again.
        #expect(after.status == 0, "\(after.stdout) \(after.stderr)")
        #expect(isAlive(h.daemonPID))
    }
}
