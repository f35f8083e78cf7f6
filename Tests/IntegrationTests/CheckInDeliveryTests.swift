import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// The launch's delivery written at the hello (added in 0.4), with the real daemon and an
/// app that reads fd 3 frame by frame (`LaunchServicesApp` in Python, `dropsVetoed=yes`: its
/// hello says it drops a vetoed launch's delivery). Apps on the previous runtime, which do
/// not say so, are in `LegacyRuntimeTests`; the Swift runtime's vetoes in
/// `LaunchPhaseFailureTests`.
@Suite("The launch's delivery written at the hello")
struct CheckInDeliveryTests {
    private func daemon(prewrite: Bool = true, settings: [String: String] = [:]) throws -> DaemonHarness {
        try LegacyRuntimeApp.daemon(name: "early", id: "test.early", scheme: "early", prewrite: prewrite, settings: settings.merging(["dropsVetoed": "yes"]) { $1 })
    }

    private func open(_ h: DaemonHarness, _ url: String) throws -> OpenOutcome {
        let client = try LaunchServicesClient(socketPath: h.socket, program: "check-in-delivery-tests")
        defer { client.close() }
        return try client.open(url, timeout: .seconds(30))
    }

    private func events(_ h: DaemonHarness, until last: String) throws -> [String] {
        try LegacyRuntimeApp.events(h, until: last)
    }

    @Test("after its hello, before answering anything, the app finds the launch methods, didBecomeActive and the delivery marked ofLaunch; four timings")
    func writtenAtTheHello() throws {
        let h = try daemon()
        defer { h.stop() }
        let outcome = try open(h, "early:cold")
        #expect(outcome.opened, "\(outcome.error?.message ?? "")")
        #expect(outcome.launched)
        #expect(outcome.method == .open)
        #expect(outcome.timings.map(\.phase) == [.launch, .willFinishLaunching, .didFinishLaunching, .openURL])
        let names = try events(h, until: "deliver")
        #expect(!names.contains { $0.hasPrefix("order-violation") }, "\(names)")
        #expect(names == [
            "started",
            "before-answering welcome launchMethod launchMethod notify deliver",
            "welcome identity=test.early",
            "launchMethod willFinishLaunching id=2 url=early:cold annotation=0",
            "launchMethod didFinishLaunching id=3 url=early:cold annotation=0",
            "notify didBecomeActive",
            "deliver id=4 url=early:cold ofLaunch=1",
        ])
        // A warm open is an ordinary delivery.
        #expect(try open(h, "early:warm").opened)
        #expect(try events(h, until: "deliver id=5").last == "deliver id=5 url=early:warm ofLaunch=0")
    }

    @Test("sent per phase (prewriteLaunchMethods false): nothing is written ahead; the delivery comes after both answers, unmarked")
    func notWithoutThePrelude() throws {
        let h = try daemon(prewrite: false)
        defer { h.stop() }
        #expect(try open(h, "early:cold").opened)
        let names = try events(h, until: "deliver")
        #expect(names.contains("before-answering welcome launchMethod"), "\(names)")
        #expect(names.last == "deliver id=4 url=early:cold ofLaunch=0")
    }

    @Test("a NO from either launch method: vetoed; the app drops the delivery written at its hello, unanswered, and still becomes active",
          arguments: ["willFinishLaunching", "didFinishLaunching"])
    func vetoDropsTheDelivery(phase: String) throws {
        let h = try daemon(settings: ["veto": phase])
        defer { h.stop() }
        let outcome = try open(h, "early:secret")
        #expect(!outcome.opened)
        #expect(outcome.error?.code == .vetoed)
        #expect(outcome.error?.phase == LaunchPhase(rawValue: phase))
        #expect(try open(h, "early:later").opened)
        let names = try events(h, until: "deliver id=5")
        #expect(names.contains("notify didBecomeActive"))
        #expect(names.contains("deliver id=4 url=early:secret ofLaunch=1"))
        #expect(names.contains("dropped id=4"))
        #expect(names.last == "deliver id=5 url=early:later ofLaunch=0")
    }

    @Test("a runtime that says it drops a vetoed delivery and answers it anyway: the caller still hears vetoed, and the daemon, ignoring that answer, goes on serving the app")
    func answerAfterVetoIsIgnored() throws {
        let h = try daemon(settings: ["veto": "willFinishLaunching", "runVetoed": "yes"])
        defer { h.stop() }
        let outcome = try open(h, "early:secret")
        #expect(outcome.error?.code == .vetoed)
        #expect(try open(h, "early:later").opened)
        let names = try events(h, until: "deliver id=5")
        #expect(!names.contains { $0.hasPrefix("dropped") })
        #expect(names.contains("deliver id=4 url=early:secret ofLaunch=1"), "\(names)")
    }
}
