import Foundation
import LaunchServicesClient
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// A rescan of the apps folders that cannot read them (here: the daemon at its descriptor
/// limit, EMFILE) withdraws nothing: the folder apps stay registered with their times, in
/// memory and in the database, and a later rescan completes the job.
@Suite("Rescans at the descriptor limit")
struct RescanAtDescriptorLimitTests {
    /// Every scheme's claims (app and registration time), to compare before and after.
    static func claims(_ h: DaemonHarness) throws -> [String: [ClaimReport]] {
        Dictionary(uniqueKeysWithValues: try h.query(.schemes, as: [SchemeReport].self).map { ($0.scheme, $0.claims) })
    }

    static func registeredIDs(_ h: DaemonHarness) throws -> [String] {
        try h.lsctl("apps", "--json").decode([AppReport].self).map(\.id)
    }

    /// The folder apps are registered with their first times, open, and are still there,
    /// with the same times, after a restart.
    static func expectFolderAppsKept(_ h: DaemonHarness, _ before: [String: [ClaimReport]], alsoExpected: [String] = []) throws {
        let ids = try registeredIDs(h)
        #expect(ids == (["test.alpha", "test.beta"] + alsoExpected).sorted(), "lsctl apps: \(ids)")
        let after = try claims(h)
        for scheme in ["alpha", "beta"] {
            #expect(after[scheme] == before[scheme], "'\(scheme):' keeps its registration time: before \(String(describing: before[scheme])), after \(String(describing: after[scheme]))")
        }
        for url in ["alpha:after", "beta:after"] {
            let open = try h.lsopen(url)
            #expect(open.status == 0, "lsopen \(url): \(open.stdout) \(open.stderr)")
        }

        try h.restart(signal: SIGTERM)
        #expect(try registeredIDs(h) == ids, "after a restart")
        let restarted = try claims(h)
        for scheme in ["alpha", "beta"] {
            #expect(restarted[scheme] == before[scheme], "'\(scheme):' keeps its registration time across a restart: \(String(describing: restarted[scheme]))")
        }
        #expect(try h.lsopen("beta:after-restart").status == 0)
    }

    @Test("a change in the apps folder noticed at the descriptor limit withdraws no app; once descriptors free up the new bundle is registered")
    func watchedChangeAtTheLimit() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")])
        defer { h.stop() }
        let before = try Self.claims(h)
        #expect(before["alpha"]?.count == 1 && before["beta"]?.count == 1, "\(before)")

        let full = try DescriptorLimit(daemon: h, room: 8, backlog: 0)
        defer { full.release() }
        // A new bundle arrives while the daemon cannot open the folder: the watch's rescan
        // runs and cannot read it.
        try h.install(.test("gamma"))
        try h.eventually("the watch's rescan ran at the limit", within: 30) {
            h.daemonOutput.contains("apps folders rescanned") || h.daemonOutput.contains("could not be read")
        }
        // (A descriptor free at that very moment would let it read the folder: then it says so.)
        if !h.daemonOutput.contains("apps folders rescanned") {
            #expect(h.daemonOutput.contains("apps folder \(h.appsFolder) could not be read (Too many open files): nothing registered from it is withdrawn or changed"), "\(h.daemonOutput)")
        }
        full.release()

        // Nothing was withdrawn, and the folder is read again without another change.
        let kept = try Self.registeredIDs(h)
        #expect(kept.contains("test.alpha") && kept.contains("test.beta"), "\(kept)")
        try h.eventually("the folder is read again and the new bundle registered", within: 30) {
            (try? Self.registeredIDs(h).contains("test.gamma")) == true
        }
        try Self.expectFolderAppsKept(h, before, alsoExpected: ["test.gamma"])
    }

    @Test("lsctl rescan asked at the descriptor limit withdraws no app and says so; the daemon reads the folder again by itself once it can; the apps survive a restart")
    func explicitRescanAtTheLimit() throws {
        // No folder watch: the explicit rescan is the only one.
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")], config: #"{"watchAppsFolders": false}"#)
        defer { h.stop() }
        let before = try Self.claims(h)
        // A connection greeted before the limit, to ask for the rescan at it.
        let held = try FrameConnection.connect(path: h.socket)
        defer { held.close() }
        try held.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "rescan-at-limit")))
        _ = try held.receive(waitingFor: "welcome", deadline: .now + .seconds(10))

        let full = try DescriptorLimit(daemon: h, room: 8, backlog: 0)
        defer { full.release() }
        try h.install(.test("gamma"))
        // Three times: none withdraws anything. Each finds the folder unreadable, unless a
        // descriptor happened to be free at that moment (then it reads it, in full).
        let unreadable = ["apps folder \(h.appsFolder) could not be read (Too many open files)"]
        var summaries: [RescanSummary] = []
        for request in 1...3 {
            try held.send(Envelope(id: UInt32(request), .command(verb: "rescan", arguments: [])))
            let answer = try held.receive(waitingFor: "the rescan's summary", deadline: .now + .seconds(30))
            guard case .queryResult(let json) = answer.message else {
                Issue.record("unexpected answer \(answer)")
                return
            }
            let summary = try JSONDecoder().decode(RescanSummary.self, from: Data(json.utf8))
            #expect(summary.removed.isEmpty, "nothing withdrawn: \(json)")
            #expect(summary.changed.isEmpty, "\(json)")
            #expect(summary.unreadable == unreadable && summary.added.isEmpty || summary.isComplete && summary.added.allSatisfy { $0 == "test.gamma" }, "\(json)")
            summaries.append(summary)
        }
        #expect(summaries.contains { !$0.isComplete }, "the daemon was at its descriptor limit: \(summaries)")
        try held.send(Envelope(id: 4, .query(topic: AdminQuery.status.topic)))
        let status = try held.receive(waitingFor: "status", deadline: .now + .seconds(30))
        if case .queryResult(let json) = status.message {
            let report = try JSONDecoder().decode(StatusReport.self, from: Data(json.utf8))
            #expect(report.unreadableInAppsFolders == (summaries.last!.isComplete ? nil : unreadable), "\(json)")
        } else {
            Issue.record("unexpected answer \(status)")
        }
        full.release()

        // Nothing watches the folder: only the daemon's own retry reads it again.
        try h.eventually("the retry reads the folder in full and registers the new bundle", within: 30) {
            (try? Self.registeredIDs(h).contains("test.gamma")) == true
        }
        #expect(try h.lsctl("status", "--json").decode(StatusReport.self).unreadableInAppsFolders == nil)
        #expect(h.daemonOutput.contains("apps folders read in full again"))
        let complete = try h.lsctl("rescan")
        #expect(complete.status == 0 && complete.stdout.contains("added: none") && !complete.stdout.contains("unreadable"), "\(complete.stdout) \(complete.stderr)")

        try Self.expectFolderAppsKept(h, before, alsoExpected: ["test.gamma"])
    }
}
