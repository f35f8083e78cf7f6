import Foundation
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// The user decides who opens what: `lsopen --app`, the terminal chooser, `--background`,
/// `--fallback`, and the launch report (`launchState`, `totalMs`, `waitMs`).
@Suite("Choosing the handler")
struct ChooseHandlerTests {
    static let contested: [TestApp] = [.test("aaa", schemes: ["shared"]), .test("bbb", schemes: ["shared"]), .test("solo")]

    @Test("--app opens in the named app when it declares the scheme; a named error when it does not")
    func namedApp() throws {
        let h = try DaemonHarness(apps: Self.contested)
        defer { h.stop() }
        let chosen = try h.lsopen("--json", "--app", "test.bbb", "shared:x")
        #expect(chosen.status == 0, "\(chosen.stdout)")
        #expect(chosen.json?["app"] as? String == "test.bbb")
        #expect(try h.lsopen("--json", "shared:y").json?["app"] as? String != "test.bbb", "without --app the rule still decides")
        let undeclared = try h.lsopen("--app", "test.solo", "shared:x")
        #expect(undeclared.status == 66)
        #expect(undeclared.stderr.contains("test.solo does not declare the scheme 'shared'"), "\(undeclared.stderr)")
        #expect(undeclared.stderr.contains("test.aaa, test.bbb"))
        let unknown = try h.lsopen("--app", "test.nobody", "shared:x")
        #expect(unknown.status == 66)
        #expect(unknown.stderr.contains("no app with bundle id 'test.nobody' is registered"))
    }

    @Test("on a terminal, a contested scheme asks: just once opens there and sets nothing; always sets the default")
    func chooserOnTerminal() throws {
        let h = try DaemonHarness(apps: Self.contested)
        defer { h.stop() }
        let once = try h.lsopenOnTerminal(answer: "2", "shared:once")
        #expect(once.status == 0, "\(once.stdout)")
        #expect(once.stdout.contains("1) test.aaa") && once.stdout.contains("2) test.bbb"), "\(once.stdout)")
        #expect(once.stdout.contains("opened shared:once in test.bbb"), "\(once.stdout)")
        #expect(try h.command(.explain(url: "shared:"), as: ExplainReport.self).userDefault == nil, "just once sets no default")

        let always = try h.lsopenOnTerminal(answer: "2a", "shared:always")
        #expect(always.stdout.contains("opened shared:always in test.bbb"), "\(always.stdout)")
        #expect(try h.command(.explain(url: "shared:"), as: ExplainReport.self).userDefault == "test.bbb")
        let after = try h.lsopenOnTerminal(answer: "1", "shared:after")
        #expect(!after.stdout.contains("Choose"), "a default is set: no question")
        #expect(after.stdout.contains("in test.bbb"))
    }

    @Test("at the chooser, Enter or Ctrl-D opens nothing: a named outcome (cancelled, exit 73), never choice 1")
    func chooserCancels() throws {
        let h = try DaemonHarness(apps: Self.contested)
        defer { h.stop() }
        let empty = try h.lsopenOnTerminal(answer: "", "shared:empty")
        #expect(empty.status == 73, "\(empty.stdout)")
        #expect(empty.stdout.contains("Enter or Ctrl-D opens nothing"), "the question says so: \(empty.stdout)")
        #expect(empty.stdout.contains("no app was chosen (an empty answer): nothing was opened"), "\(empty.stdout)")
        let eof = try h.lsopenOnTerminal(answer: "<EOF>", "shared:eof")
        #expect(eof.status == 73, "\(eof.stdout)")
        #expect(eof.stdout.contains("the chooser was closed (end of input): nothing was opened"), "\(eof.stdout)")
        let json = try h.lsopenOnTerminal(answer: "", "--json", "shared:json")
        #expect(json.status == 73)
        #expect(json.stdout.contains(#""opened":false"#) && json.stdout.contains(#""code":"cancelled""#), "\(json.stdout)")
        #expect(h.appPIDs.isEmpty, "no app was launched")
        #expect(try h.command(.explain(url: "shared:"), as: ExplainReport.self).userDefault == nil)
    }

    @Test("--no-ask on a terminal and any run without a terminal never ask: the rule decides")
    func noQuestion() throws {
        let h = try DaemonHarness(apps: Self.contested)
        defer { h.stop() }
        let rule = try h.command(.explain(url: "shared:"), as: ExplainReport.self).app
        let noAsk = try h.lsopenOnTerminal(answer: "2", "--no-ask", "shared:x")
        #expect(noAsk.status == 0)
        #expect(!noAsk.stdout.contains("Choose"), "\(noAsk.stdout)")
        #expect(noAsk.stdout.contains("in \(rule ?? "?")"))
        let piped = try h.lsopen("shared:y")
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("Choose") && piped.stdout.contains("in \(rule ?? "?")"), "\(piped.stdout)\(piped.stderr)")
        let forced = try h.lsopenOnTerminal(answer: "1", "--ask", "solo:x")
        #expect(forced.stdout.contains("1) test.solo"), "--ask asks even with one claimant: \(forced.stdout)")
    }

    @Test("--background: the app gets the URL, is told so, and the frontmost app keeps the front")
    func background() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")])
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        let quiet = try h.lsopen("--json", "--background", "beta:1")
        #expect(quiet.status == 0, "\(quiet.stdout)")
        #expect(quiet.json?["launchState"] as? String == "cold")
        let running = try h.running()
        #expect(running.first { $0.frontmost }?.id == "test.alpha")
        #expect(running.first { $0.id == "test.beta" }?.state == "background")
        #expect(h.eventNames().contains { $0.hasPrefix("open url=beta:1") && $0.hasSuffix(" background") })
        #expect(!h.eventNames().contains("willResignActive"), "alpha was not disturbed")
        #expect(!h.eventNames().contains { $0 == "didBecomeActive" && false })
    }

    @Test("--fallback opens the other URL when no app handles the scheme, and says so")
    func fallback() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let r = try h.lsopen("--json", "--fallback", "alpha:store?item=42", "nothing:x")
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.json?["url"] as? String == "alpha:store?item=42")
        #expect(r.json?["fallbackFrom"] as? String == "nothing:x")
        let text = try h.lsopen("--fallback", "alpha:store", "nothing:y")
        #expect(text.stderr.contains("no app handles nothing:y; opening the fallback alpha:store"))
        #expect(try h.lsopen("--fallback", "alpha:store", "alpha:direct").stdout.contains("opened alpha:direct"), "a handled URL needs no fallback")
    }

    @Test("the launch report: cold, hot, warm and resumed, with totalMs and waitMs")
    func launchStates() throws {
        let h = try DaemonHarness(apps: [.test("alpha"), .test("beta")], config: #"{"backgroundGraceSeconds": 0.3}"#)
        defer { h.stop() }
        func state(_ url: String) throws -> (String?, Double?, Double?) {
            let r = try h.lsopen("--json", url)
            return (r.json?["launchState"] as? String, r.json?["totalMs"] as? Double, r.json?["waitMs"] as? Double)
        }
        let cold = try state("alpha:1")
        #expect(cold.0 == "cold")
        #expect((cold.1 ?? -1) > 0 && (cold.2 ?? -1) >= (cold.1 ?? 0), "the caller waits at least the daemon's total")
        #expect(try state("alpha:2").0 == "hot")
        #expect(try state("beta:1").0 == "cold")
        #expect(try state("alpha:3").0 == "warm")
        try h.eventually("beta is suspended") { try h.state(of: "test.beta") == "suspended" }
        #expect(try state("beta:2").0 == "resumed")
        let text = try h.lsopen("alpha:4")
        #expect(text.stdout.contains("(warm, method open; openURL") && text.stdout.contains("total ") && text.stdout.contains("wait "), "\(text.stdout)")
    }
}
