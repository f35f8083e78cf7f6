import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// An app built on the previous runtime (`LegacyRuntimeApp`: the 0.3 protocol's §5.2, read
/// strictly one frame at a time after its hello) run by the real daemon, with the launch
/// methods written at spawn (`prewriteLaunchMethods`, the default) and without.
@Suite("An app on the previous runtime")
struct LegacyRuntimeTests {
    static let bothModes = [true, false]

    /// A daemon with the legacy app registered for `legacy:`, launch methods written at
    /// spawn or not.
    private func daemon(prewrite: Bool, settings: [String: String] = [:]) throws -> DaemonHarness {
        try LegacyRuntimeApp.daemon(name: "legacy", id: "test.legacy", scheme: "legacy", prewrite: prewrite, settings: settings)
    }

    private func open(_ h: DaemonHarness, _ url: String, annotation: PropertyListValue? = nil) throws -> OpenOutcome {
        let client = try LaunchServicesClient(socketPath: h.socket, program: "legacy-runtime-tests")
        defer { client.close() }
        return try client.open(url, annotation: annotation, timeout: .seconds(30))
    }

    private func events(_ h: DaemonHarness, until last: String) throws -> [String] {
        try LegacyRuntimeApp.events(h, until: last)
    }

    @Test("cold-opens: the frames in §5.2's order, read one at a time after the hello; four timings in order", arguments: bothModes)
    func coldOpens(prewrite: Bool) throws {
        let h = try daemon(prewrite: prewrite)
        defer { h.stop() }
        let outcome = try open(h, "legacy:cold")
        #expect(outcome.opened, "\(outcome.error?.message ?? "")")
        #expect(outcome.launched)
        #expect(outcome.launchState == .cold)
        #expect(outcome.method == .open)
        #expect(outcome.timings.map(\.phase) == [.launch, .willFinishLaunching, .didFinishLaunching, .openURL])
        let names = try events(h, until: "deliver")
        #expect(!names.contains { $0.hasPrefix("order-violation") }, "\(names)")
        // The two launch methods carry consecutive ids and the delivery the next one: this
        // daemon's first launch takes tokens 1 (launch), 2 and 3, and its delivery 4.
        #expect(names == [
            "started",
            "welcome identity=test.legacy",
            "launchMethod willFinishLaunching id=2 url=legacy:cold annotation=0",
            "launchMethod didFinishLaunching id=3 url=legacy:cold annotation=0",
            "notify didBecomeActive",
            "deliver id=4 url=legacy:cold",
        ])
        // A warm open reaches the same process.
        #expect(try open(h, "legacy:warm").opened)
        #expect(try events(h, until: "deliver id=5").last == "deliver id=5 url=legacy:warm")
    }

    @Test("a NO from either launch method stops the delivery; the app still finishes launching", arguments: [
        "willFinishLaunching", "didFinishLaunching",
    ], bothModes)
    func veto(phase: String, prewrite: Bool) throws {
        let h = try daemon(prewrite: prewrite, settings: ["veto": phase])
        defer { h.stop() }
        let outcome = try open(h, "legacy:secret")
        #expect(!outcome.opened)
        #expect(outcome.error?.code == .vetoed)
        #expect(outcome.error?.phase == LaunchPhase(rawValue: phase))
        #expect(outcome.launched)
        // Both methods ran, in order, and the app became active; a later open arrives after
        // anything sent before it, so the vetoed URL was never delivered.
        #expect(try open(h, "legacy:later").opened)
        let names = try events(h, until: "deliver")
        #expect(!names.contains { $0.hasPrefix("order-violation") }, "\(names)")
        #expect(names.filter { $0.hasPrefix("launchMethod") }.map { String($0.split(separator: " ")[1]) } == ["willFinishLaunching", "didFinishLaunching"])
        #expect(names.contains("notify didBecomeActive"))
        #expect(names.filter { $0.hasPrefix("deliver") }.map { String($0.split(separator: " ").last!) } == ["url=legacy:later"])
    }

    @Test("written at spawn, the welcome and both launch methods are on the app's connection before its hello; sent per phase, nothing is", arguments: bothModes)
    func waitingBeforeHello(prewrite: Bool) throws {
        // Bounded: without the prelude the app waits the full 2 s before its hello.
        let h = try daemon(prewrite: prewrite, settings: ["peekBeforeHello": "2"])
        defer { h.stop() }
        #expect(try open(h, "legacy:peek").opened)
        let names = try events(h, until: "deliver")
        #expect(names.contains("waiting-before-hello \(prewrite ? "yes" : "no")"), "\(names)")
        #expect(!names.contains { $0.hasPrefix("order-violation") }, "\(names)")
    }

    @Test("an annotation near the frame limit, in both launch methods: more than the socket takes at spawn, still delivered whole and in order", arguments: bothModes)
    func largeAnnotation(prewrite: Bool) throws {
        let h = try daemon(prewrite: prewrite)
        defer { h.stop() }
        // One string of 900,000 bytes: each launchMethod frame is about 0.9 MB, the two
        // together above a Unix socket's default buffer (about 200 KB).
        let annotation = PropertyListValue.string(String(repeating: "a", count: 900_000))
        let outcome = try open(h, "legacy:big", annotation: annotation)
        #expect(outcome.opened, "\(outcome.error?.message ?? "")")
        let names = try events(h, until: "deliver")
        #expect(!names.contains { $0.hasPrefix("order-violation") }, "\(names)")
        #expect(names.filter { $0.hasPrefix("launchMethod") } == [
            "launchMethod willFinishLaunching id=2 url=legacy:big annotation=900005",
            "launchMethod didFinishLaunching id=3 url=legacy:big annotation=900005",
        ])
    }
}
