import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `SessionBusClient`: where the bus is, no bus, the bus killed with a call in flight and a
/// new bus at the same address, the bound on calls, the stop, and a reply that comes after
/// the deadline (every call answered exactly once). Real `dbus-daemon`s (`DBusFixture`).
@Suite("Session bus client: address, connection, bound, exactly one answer", .serialized)
struct SessionBusClientTests {
    @Test("the address: DBUS_SESSION_BUS_ADDRESS, else XDG_RUNTIME_DIR/bus (escaped), else a named error")
    func address() {
        #expect(SessionBusAddress.resolve(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/a", "XDG_RUNTIME_DIR": "/run/user/7"])
            == .success(SessionBusAddress(address: "unix:path=/a", source: "DBUS_SESSION_BUS_ADDRESS")))
        #expect(SessionBusAddress.resolve(environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": "/run/user/7"])
            == .success(SessionBusAddress(address: "unix:path=/run/user/7/bus", source: "XDG_RUNTIME_DIR")))
        #expect(SessionBusAddress.resolve(environment: ["XDG_RUNTIME_DIR": "/tmp/a b,c/"])
            == .success(SessionBusAddress(address: "unix:path=/tmp/a%20b%2cc/bus", source: "XDG_RUNTIME_DIR")))
        #expect(SessionBusAddress.resolve(environment: [:]) == .failure(.noSessionBusAddress))
        #expect(SessionBusAddress.resolve(environment: ["XDG_RUNTIME_DIR": "run/user/7"]) == .failure(.relativeRuntimeDirectory("run/user/7")))
        #expect("\(DBusCallFailure.noSessionBusAddress)".contains("neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"))
    }

    @Test("no bus at the address: a named failure saying which address was tried and where it came from")
    func noBus() async throws {
        let fixture = try DBusFixture(apps: [:])
        defer { fixture.remove() }
        let bus = fixture.bus
        let missing = bus.root + "/no-bus-here"
        let (client, activator) = try await fixture.makeActivator(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + missing])
        let outcome = try fixture.open(activator, busName: "org.example.App", urls: ["x-test:a"])
        #expect(outcome == .failed(.dbus(.noSessionBus(address: "unix:path=" + missing, source: "DBUS_SESSION_BUS_ADDRESS",
                                                       errno: ENOENT, reason: String(cString: strerror(ENOENT))))))
        #expect(outcome.description.contains("no session bus at 'unix:path=\(missing)' (from DBUS_SESSION_BUS_ADDRESS)"), "\(outcome)")
        try fixture.shutdown(client)

        let (nonsense, nonsenseActivator) = try await fixture.makeActivator(environment: ["DBUS_SESSION_BUS_ADDRESS": "nonsense"])
        let refused = try fixture.open(nonsenseActivator, busName: "org.example.App", urls: ["x-test:a"])
        guard case .dbus(.noSessionBus(let address, let source, _, _))? = refused.failure else {
            Issue.record("expected no session bus, got \(refused)")
            return
        }
        #expect(address == "nonsense" && source == "DBUS_SESSION_BUS_ADDRESS")
        try fixture.shutdown(nonsense)

        let (bare, bareActivator) = try await fixture.makeActivator(environment: [:])
        #expect(try fixture.open(bareActivator, busName: "org.example.App", urls: ["x-test:a"]) == .failed(.dbus(.noSessionBusAddress)))
        try fixture.shutdown(bare)
    }

    @Test("only XDG_RUNTIME_DIR set: the bus at its socket bus is used")
    func runtimeDirectoryBus() async throws {
        let fixture = try DBusFixture(apps: ["org.example.App": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        // The private bus listens at ROOT/bus, so ROOT plays the runtime folder.
        let (client, activator) = try await fixture.makeActivator(environment: ["XDG_RUNTIME_DIR": bus.root])
        #expect(try fixture.open(activator, busName: "org.example.App", urls: ["x-test:runtime"]) == .delivered)
        #expect(try bus.waitForCalls("Open", of: "org.example.App").first?.uris == ["x-test:runtime"])
        try fixture.shutdown(client)
    }

    @Test("the bus killed with a call in flight: the call fails by name; the next call connects to the new bus at the same address")
    func busKilledAndBack() async throws {
        let fixture = try DBusFixture(apps: ["org.example.Silent": .silent, "org.example.App": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        let inFlight = fixture.start(activator, busName: "org.example.Silent", urls: ["x-test:lost"])
        _ = try bus.waitForCalls("Open", of: "org.example.Silent")
        #expect(inFlight.count == 0)
        bus.kill()
        let lost = try fixture.wait(for: inFlight)
        #expect(lost == .failed(.dbus(.disconnected(address: bus.address))))
        #expect(lost.description.contains("closed the connection before the reply; the next call connects again"))

        // No bus now: the next call says so.
        let none = try fixture.open(activator, busName: "org.example.App", urls: ["x-test:none"])
        guard case .dbus(.noSessionBus(let address, _, _, _))? = none.failure else {
            Issue.record("expected no session bus, got \(none)")
            return
        }
        #expect(address == bus.address)

        try bus.start()
        #expect(try fixture.open(activator, busName: "org.example.App", urls: ["x-test:back"]) == .delivered)
        #expect(try bus.waitForCalls("Open", of: "org.example.App").first?.uris == ["x-test:back"])

        // Killed again with nothing in flight, and back: the idle connection is noticed as
        // gone, and the next call connects to the new bus.
        bus.kill()
        try bus.start()
        #expect(try fixture.open(activator, busName: "org.example.App", urls: ["x-test:again"]) == .delivered)
        #expect(try bus.waitForCalls("Open", of: "org.example.App", count: 2).last?.uris == ["x-test:again"])
        try fixture.shutdown(client)
        #expect(inFlight.count == 1, "the lost call was answered \(inFlight.count) times")
    }

    @Test("past the bound a call is refused by name at once; the stop answers the calls in flight, and every later call, stopping")
    func boundAndStop() async throws {
        let fixture = try DBusFixture(apps: ["org.example.Silent": .silent])
        defer { fixture.remove() }
        let bus = fixture.bus
        var settings = SessionBusSettings()
        settings.maximumCalls = 2
        let (client, activator) = try await fixture.makeActivator(settings: settings)
        let first = fixture.start(activator, busName: "org.example.Silent", urls: ["x-test:1"])
        let second = fixture.start(activator, busName: "org.example.Silent", urls: ["x-test:2"])
        let third = try fixture.open(activator, busName: "org.example.Silent", urls: ["x-test:3"])
        #expect(third == .failed(.dbus(.tooManyCalls(limit: 2))))
        _ = try bus.waitForCalls("Open", of: "org.example.Silent", count: 2)
        #expect(first.count == 0 && second.count == 0)
        try fixture.shutdown(client)
        #expect(try fixture.wait(for: first) == .failed(.dbus(.stopping)))
        #expect(try fixture.wait(for: second) == .failed(.dbus(.stopping)))
        #expect(try fixture.open(activator, busName: "org.example.Silent", urls: ["x-test:after"]) == .failed(.dbus(.stopping)))
        #expect(first.count == 1 && second.count == 1)
        #expect(bus.records(of: "org.example.Silent").filter { $0.method == "Open" }.map(\.uris) == [["x-test:1"], ["x-test:2"]])
    }

    @Test("a reply after the deadline is dropped: the call was answered once, at the deadline, and the connection goes on")
    func lateReply() async throws {
        let fixture = try DBusFixture(apps: ["org.example.Late": .late])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator(deadline: .seconds(2))
        let late = fixture.start(activator, busName: "org.example.Late", urls: ["x-test:late"])
        #expect(try fixture.wait(for: late) == .failed(.dbus(.noReply(destination: "org.example.Late", member: "Open", milliseconds: 2000))))
        _ = try bus.waitForCalls("Open", of: "org.example.Late")
        #expect(FileManager.default.createFile(atPath: bus.trigger, contents: nil))
        _ = try bus.waitForCalls("replied", of: "org.example.Late")
        // The app replies to this one after the late reply, on the same connection: once
        // this is answered, the late reply has been read (and dropped).
        let (_, patient) = try await fixture.makeActivator(client: client)
        #expect(try fixture.open(patient, busName: "org.example.Late", urls: ["x-test:next"]) == .delivered)
        try fixture.shutdown(client)
        #expect(late.count == 1, "the timed-out call was answered \(late.count) times: \(late.outcomes.withLockedValue { $0 })")
    }
}
