import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `DBusApplicationActivator` on a private session bus the test starts (`PrivateSessionBus`): a real `dbus-daemon`
/// activates a real app (`scripts/test-peers/dbus_test_app.py`) for
/// `org.freedesktop.Application.Open`, and the app records what it received. Each outcome:
/// delivered (byte for byte), the app's error reply, no reply by the deadline, a name no
/// service provides, a name that is no bus name; and `gdbus call` and GLib's own `gio open`
/// reaching the same app the same way.
@Suite("D-Bus activation: org.freedesktop.Application on a private session bus", .serialized)
struct DBusActivationTests {
    /// URLs carrying what a shell, a desktop entry or a URL parser would act on, and more
    /// than ASCII.
    static let awkwardURLs = [
        "x-test://host/a b?q=\"double\" 'single';rm -rf nothing $(touch pwned) `touch pwned` #frag | & > x \\ end",
        "x-test:caf\u{e9}/\u{65e5}\u{672c}?emoji=\u{1F600}&combining=e\u{301}#\u{200F}rtl",
        "mailto:someone@example.com?subject=a%20b;c",
    ]

    @Test("Open: the bus starts the app, which has every URL byte for byte in one call; the outcome is delivered, answered once, on the loop")
    func delivered() async throws {
        let fixture = try DBusFixture(apps: ["org.example.App": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        #expect(bus.appPIDs.isEmpty, "the app runs before anyone asked for it")
        let answers = fixture.start(activator, busName: "org.example.App", urls: Self.awkwardURLs)
        let outcome = try fixture.wait(for: answers)
        #expect(outcome == .delivered)
        #expect(outcome.description == "delivered")
        let opens = try bus.waitForCalls("Open", of: "org.example.App")
        #expect(opens.map(\.uris) == [Self.awkwardURLs])
        #expect(opens.first?.platformData == [:], "without a display the platform data is empty, as GLib's without a launch context")
        let started = bus.records(of: "org.example.App").filter { $0.method == "started" }
        #expect(started.count == 1, "the bus started the app once (activation)")
        #expect(started.first?.pid == opens.first?.pid)

        // A second open reaches the running instance: no second start.
        #expect(try fixture.open(activator, busName: "org.example.App", urls: ["x-test:second"]) == .delivered)
        #expect(try bus.waitForCalls("Open", of: "org.example.App", count: 2).last?.uris == ["x-test:second"])
        #expect(bus.records(of: "org.example.App").filter { $0.method == "started" }.count == 1)
        try fixture.shutdown(client)
        #expect(answers.count == 1 && answers.offLoop.withLockedValue { $0 } == 0)
        #expect(fixture.logLines.withLockedValue { $0 }.contains { $0.contains("desktop app delivered") })
    }

    @Test("no URLs: Activate(platform_data); an activation token goes in desktop-startup-id and activation-token")
    func activateAndToken() async throws {
        let fixture = try DBusFixture(apps: ["org.example.App": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        #expect(try fixture.open(activator, busName: "org.example.App", urls: []) == .delivered)
        let activated = try bus.waitForCalls("Activate", of: "org.example.App")
        #expect(activated.first?.platformData == [:])
        let token = "launcher-token_42 \u{e9}"
        #expect(try fixture.open(activator, busName: "org.example.App", urls: ["x-test:token"], platformData: DBusPlatformData(activationToken: token)) == .delivered)
        let opened = try bus.waitForCalls("Open", of: "org.example.App")
        #expect(opened.first?.platformData == ["desktop-startup-id": token, "activation-token": token])
        try fixture.shutdown(client)
    }

    @Test("a hyphenated name: the object path has _ for -, as the Desktop Entry specification derives it")
    func hyphenatedName() async throws {
        let fixture = try DBusFixture(apps: ["org.example.my-app": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        #expect(try fixture.open(activator, busName: "org.example.my-app", urls: ["x-test:h"]) == .delivered)
        #expect(try bus.waitForCalls("Open", of: "org.example.my-app").first?.uris == ["x-test:h"])
        try fixture.shutdown(client)
    }

    @Test("the app answers Open with an error: a named failure with the error's name and message, never delivered")
    func errorReply() async throws {
        let fixture = try DBusFixture(apps: ["org.example.Refuses": .error])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        let outcome = try fixture.open(activator, busName: "org.example.Refuses", urls: ["x-test:refused"])
        #expect(outcome == .failed(.dbus(.errorReply(name: PrivateSessionBus.refusalName, message: PrivateSessionBus.refusalMessage))))
        #expect(!outcome.kind.isSuccess)
        #expect(outcome.description.hasPrefix("not delivered: the reply was the error 'org.example.Error.Refused'"), "\(outcome)")
        #expect(outcome.description.contains(#"'no thanks: "quoted" \'single\' ; #frag"#), "\(outcome)")
        #expect(try bus.waitForCalls("Open", of: "org.example.Refuses").first?.uris == ["x-test:refused"])
        try fixture.shutdown(client)
        let logged = fixture.logLines.withLockedValue { $0 }.filter { $0.contains("not delivered") }
        #expect(logged.count == 1 && logged.allSatisfy { $0.contains("org.example.Error.Refused") && !$0.contains("no thanks") },
                "the log has the error's name, never its message (which may quote the URL): \(logged)")
    }

    @Test("the app never answers: a named failure at the deadline, though the app has the call")
    func noReply() async throws {
        let fixture = try DBusFixture(apps: ["org.example.Silent": .silent])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator(deadline: .seconds(2))
        let outcome = try fixture.open(activator, busName: "org.example.Silent", urls: ["x-test:unanswered"])
        #expect(outcome == .failed(.dbus(.noReply(destination: "org.example.Silent", member: "Open", milliseconds: 2000))))
        #expect(outcome.description == "not delivered: 'org.example.Silent' did not answer Open within 2000 ms")
        // The call did reach the app (the bus started it): only its answer is missing.
        #expect(try bus.waitForCalls("Open", of: "org.example.Silent").first?.uris == ["x-test:unanswered"])
        try fixture.shutdown(client)
    }

    @Test("a name no service provides: the bus's ServiceUnknown error, by name")
    func serviceUnknown() async throws {
        let fixture = try DBusFixture(apps: [:])
        defer { fixture.remove() }
        let (client, activator) = try await fixture.makeActivator()
        let outcome = try fixture.open(activator, busName: "org.example.Nobody", urls: ["x-test:nobody"])
        guard case .dbus(.errorReply(let name, let message))? = outcome.failure else {
            Issue.record("expected an error reply, got \(outcome)")
            return
        }
        #expect(name == "org.freedesktop.DBus.Error.ServiceUnknown")
        #expect(message.contains("org.example.Nobody"))
        try fixture.shutdown(client)
    }

    @Test("a name that is no bus name, or a URL with a NUL byte, is refused by name and nothing is sent")
    func refusedBeforeSending() async throws {
        let fixture = try DBusFixture(apps: ["org.example.App": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        let outcome = try fixture.open(activator, busName: "org.example.2nd", urls: ["x-test:x"])
        #expect(outcome == .failed(.dbus(.invalidCall(reason: "'org.example.2nd' is not a D-Bus bus name: element 3 starts with a digit"))))
        let cut = try fixture.open(activator, busName: "org.example.App", urls: ["x-test:ok", "x-test:a\u{0}b"])
        #expect(cut == .failed(.dbus(.invalidCall(reason: "argument 1: a string contains a NUL byte, which D-Bus strings cannot carry"))))
        // Nothing reached the bus: the app was never started.
        #expect(try fixture.open(activator, busName: "org.example.App", urls: []) == .delivered)
        #expect(bus.records(of: "org.example.App").map(\.method) == ["started", "Activate"])
        try fixture.shutdown(client)
    }

    @Test("the same app, reached by gdbus call and by GLib's gio open of a DBusActivatable entry, records the same call as the daemon's")
    func sameAsGLib() async throws {
        let fixture = try DBusFixture(apps: ["org.example.App": .answer])
        defer { fixture.remove() }
        let bus = fixture.bus
        let (client, activator) = try await fixture.makeActivator()
        let url = Self.awkwardURLs[0]
        #expect(try fixture.open(activator, busName: "org.example.App", urls: [url]) == .delivered)

        let quoted = "['" + url.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "']"
        let gdbus = try ChildProcess.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.example.App", "--object-path", "/org/example/App",
                                                            "--method", "org.freedesktop.Application.Open", quoted, "{}"],
                                         environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(gdbus.status == 0, "gdbus call failed: \(gdbus.stderr)")

        // GLib launches the entry over D-Bus because its file name is a bus name.
        let applications = bus.root + "/data/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bus.root + "/config", withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=D-Bus test app\nExec=/bin/false %u\nDBusActivatable=true\nMimeType=x-scheme-handler/x-test;\n"
            .write(toFile: applications + "/org.example.App.desktop", atomically: true, encoding: .utf8)
        try "[Default Applications]\nx-scheme-handler/x-test=org.example.App.desktop\n"
            .write(toFile: bus.root + "/config/mimeapps.list", atomically: true, encoding: .utf8)
        let gio = try ChildProcess.run("/usr/bin/gio", ["open", url], environment: bus.environment, scratch: bus.root, timeout: 60)
        #expect(gio.status == 0, "gio open failed: \(gio.stderr)")

        let opens = try bus.waitForCalls("Open", of: "org.example.App", count: 3)
        let ours = opens[0]
        for (other, tool) in zip(opens.dropFirst(), ["gdbus call", "gio open"]) {
            #expect(other.uris == ours.uris, "\(tool) sent \(other.uris), the daemon \(ours.uris)")
            #expect(other.platformData == ours.platformData, "\(tool) sent platform data \(other.platformData), the daemon \(ours.platformData)")
            #expect(other.pid == ours.pid, "\(tool) reached another instance")
        }
        try fixture.shutdown(client)
    }
}
