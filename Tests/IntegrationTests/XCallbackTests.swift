import Foundation
import Testing

/// Returning control (x-callback-url): `lsopen --wait`, the wordrev/schemedemo round trip, replies
/// of every kind, a callee that never calls back, and the protection against callbacks
/// that would hand control to a third app. Real daemon, real demo apps, real `lsopen`.
@Suite("x-callback-url and lsopen --wait")
struct XCallbackTests {
    @Test("lsopen --wait reverses 'hello world' through wordrev: prints word=dlrow olleh, exit 0")
    func waitForWordrev() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev")])
        defer { h.stop() }
        let plain = try h.lsopen("--wait", "wordrev://x-callback-url/reverse?word=hello%20world")
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == "word=dlrow olleh\n")

        let json = try h.lsopen("--wait", "--json", "wordrev://x-callback-url/reverse?word=caf%C3%A9%20%F0%9F%98%80")
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(json.json)
        #expect(object["result"] as? String == "success")
        #expect(object["app"] as? String == "com.example.wordrev")
        #expect((object["parameters"] as? [String: Any])?["word"] as? String == "😀 éfac")
        #expect(h.appOutput.contains("[wordrev] reverse 'hello world' for org.swift-launch-services.lsopen (x-source lsopen) → 'dlrow olleh'"))
    }

    @Test("what the callee sends back is shown escaped: ESC and a newline in a value print as \\x1B and \\n, on one line; --json has it exactly")
    func callbackParametersEscaped() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev")])
        defer { h.stop() }
        // wordrev answers with the word reversed: "a ESC [2J newline forged=yes".
        let url = "wordrev://x-callback-url/reverse?word=sey%3Ddegrof%0AJ2%5B%1Ba"
        let plain = try h.lsopen("--wait", url)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == "word=a\\x1B[2J\\nforged=yes\n", "one escaped line, no forged second one")
        #expect(!plain.stdout.unicodeScalars.contains("\u{1B}"))

        let json = try h.lsopen("--wait", "--json", url)
        #expect(json.status == 0, "\(json.stderr)")
        #expect((json.json?["parameters"] as? [String: Any])?["word"] as? String == "a\u{1B}[2J\nforged=yes", "a script gets the exact text")
    }

    @Test("x-error and x-cancel replies: distinct exit codes, the error's code and message")
    func errorAndCancel() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev")])
        defer { h.stop() }
        let error = try h.lsopen("--wait", "--json", "wordrev://x-callback-url/reverse")
        #expect(error.status == 70, "\(error.stdout) \(error.stderr)")
        let object = try #require(error.json)
        #expect(object["result"] as? String == "error")
        #expect((object["parameters"] as? [String: Any])?["errorCode"] as? String == "missingWord")
        #expect((object["message"] as? String)?.contains("no word to reverse") == true)

        let unknown = try h.lsopen("--wait", "wordrev://x-callback-url/shout?word=a")
        #expect(unknown.status == 70)
        #expect(unknown.stderr.contains("errorCode unknownAction"))
        #expect(unknown.stdout.isEmpty)

        let cancel = try h.lsopen("--wait", "wordrev://x-callback-url/reverse?word=")
        #expect(cancel.status == 71, "\(cancel.stderr)")
        #expect(cancel.stderr.contains("cancelled"))
    }

    @Test("bad --wait requests: not an x-callback-url, callbacks already given, no handler")
    func badWaitRequests() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev")])
        defer { h.stop() }
        let notX = try h.lsopen("--wait", "wordrev://reverse?word=a")
        #expect(notX.status == 64)
        #expect(notX.stderr.contains("x-callback-url"))
        let own = try h.lsopen("--wait", "wordrev://x-callback-url/reverse?word=a&x-success=wordrev://x")
        #expect(own.status == 64)
        #expect(own.stderr.contains("x-success"))
        let none = try h.lsopen("--wait", "--json", "nosuch://x-callback-url/do")
        #expect(none.status == 66)
        #expect(none.errorCode == "noHandler")
    }

    @Test("a callee that never calls back: --wait times out cleanly, and its address is withdrawn")
    func calleeNeverCallsBack() throws {
        let h = try DaemonHarness(apps: [.test("silent")])
        defer { h.stop() }
        let started = Date()
        let run = try h.lsopen("--wait", "--timeout", "2", "--json", "silent://x-callback-url/do?n=1", timeout: 30)
        #expect(run.status == 72, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["result"] as? String == "timeout")
        #expect(Date().timeIntervalSince(started) < 10)
        // The app got the request with lsopen's callback address; once lsopen is gone, a late
        // callback finds nobody waiting and says so.
        let delivered = try #require(h.eventNames().first { $0.hasPrefix("open url=silent://x-callback-url/do") })
        let token = try #require(delivered.range(of: "x-lsopen-callback%3A%2F%2F").map { delivered[$0.upperBound...].prefix(32) })
        #expect(token.count == 32)
        let late = try h.lsopen("--json", "x-lsopen-callback://\(token)/success?x=1")
        #expect(late.status == 66)
        #expect(late.errorMessage?.contains("nobody waits") == true)
        #expect(try h.state(of: "test.silent") != nil, "the app itself is unharmed")
    }

    @Test("schemedemo asks wordrev and passes the answer on: a chained round trip")
    func schemedemoRoundTrip() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev"), try .demo("schemedemo")])
        defer { h.stop() }
        let run = try h.lsopen("--wait", "schemedemo://x-callback-url/reverse?word=stressed")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "word=desserts\n")
        let log = h.appOutput
        #expect(log.contains("[schemedemo] asking wordrev to reverse 'stressed' (session 1)"))
        #expect(log.contains("[wordrev] reverse 'stressed' for com.example.schemedemo (x-source SchemeDemo) → 'desserts'"))
        #expect(log.contains("[schemedemo] com.example.wordrev reversed 'stressed' → 'desserts'"))

        // The plain form, without a waiting caller, prints the answer in schemedemo.
        #expect(try h.lsopen("schemedemo://reverse?word=drawer").status == 0)
        try h.eventually("schemedemo prints the reversed word") { h.appOutput.contains("reversed 'drawer' → 'reward'") }
    }

    @Test("lsopen naming a third app's scheme as x-success is refused; neither app is launched")
    func hijackFromShellRefused() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev"), .test("third")])
        defer { h.stop() }
        let run = try h.lsopen("--json", "wordrev://x-callback-url/reverse?word=x&x-success=third%3A%2F%2Fsteal")
        #expect(run.status == 67, "\(run.stdout)")
        #expect(run.errorCode == "notPermitted")
        #expect(run.errorMessage?.contains("'third://steal' opens in test.third") == true)
        #expect(try h.running().isEmpty, "neither wordrev nor the third app was launched")
        #expect(h.events.isEmpty)
    }

    @Test("callback parameter names in any case (X-Success, X-ERROR) are checked: refused, the third app not launched")
    func hijackWithCaseVariantRefused() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev"), .test("third")])
        defer { h.stop() }
        for name in ["X-Success", "X-ERROR", "x-Cancel"] {
            let run = try h.lsopen("--json", "wordrev://x-callback-url/reverse?word=x&\(name)=third%3A%2F%2Fsteal")
            #expect(run.status == 67, "\(name): \(run.stdout)")
            #expect(run.errorCode == "notPermitted", "\(name)")
            #expect(run.errorMessage?.contains("'third://steal' opens in test.third") == true, "\(run.errorMessage ?? "")")
        }
        #expect(try h.running().isEmpty, "neither wordrev nor the third app was launched")
        #expect(h.events.isEmpty)
        // lsopen --wait sees them as callbacks the URL already names.
        let own = try h.lsopen("--wait", "wordrev://x-callback-url/reverse?word=a&X-Success=third%3A%2F%2Fsteal")
        #expect(own.status == 64)
        #expect(own.stderr.contains("already names x-success"), "\(own.stderr)")
        #expect(h.events.isEmpty)
    }

    @Test("an app naming a third app's scheme as x-success is refused; an honest app is called back")
    func hijackFromAppRefused() throws {
        let liar = TestApp.test("liar", "--open-url=wordrev://x-callback-url/reverse?word=x&x-success=third%3A%2F%2Fsteal")
        let honest = TestApp.test("honest", "--open-url=wordrev://x-callback-url/reverse?word=abc&x-success=honest%3A%2F%2Fdone%3Fsession%3D7")
        let h = try DaemonHarness(apps: [try .demo("wordrev"), .test("third"), liar, honest])
        defer { h.stop() }

        #expect(try h.lsopen("liar:go").status == 0)
        try h.eventually("the liar hears the refusal") { h.eventNames().contains { $0.hasPrefix("openResult wordrev://") && $0.contains("error=notPermitted") } }
        #expect(h.daemonOutput.contains("the x-success callback 'third:…' opens in test.third, not in test.liar"), "logged with the scheme only")
        #expect(!h.daemonOutput.contains("steal"), "URLs stay out of the log")

        #expect(try h.lsopen("honest:go").status == 0)
        try h.eventually("wordrev calls the honest app back, keeping its callback's own query") {
            h.eventNames().contains { $0.hasPrefix("open url=honest://done?session=7&word=cba source=com.example.wordrev") }
        }
        let running = try h.running().map(\.id)
        #expect(!running.contains("test.third"), "the third app was never launched")
        #expect(!h.eventNames().contains { $0.contains("url=third:") })
    }

    @Test("a returning open goes only to the app that asked: x-sadun-services' scheme= parameter")
    func returningOpenChecked() throws {
        let pinger = TestApp.test("pinger", "--open-url=x-sadun-services:paste?scheme=pinger&data=a+b&clipboard=c1")
        let liar = TestApp.test("liar", "--open-url=x-sadun-services:paste?scheme=third&data=x&clipboard=c2")
        let h = try DaemonHarness(apps: [try .demo("x-sadun-services"), .test("third"), pinger, liar])
        defer { h.stop() }

        #expect(try h.lsopen("pinger:go").status == 0)
        try h.eventually("the service returns control to its caller") {
            h.eventNames().contains { $0.hasPrefix("open url=pinger://pasted?clipboard=c1&changeCount=1 source=com.sadun.services") }
        }
        #expect(try h.lsctl("pasteboard", "paste", "--name", "c1").stdout == "a b")

        #expect(try h.lsopen("liar:go").status == 0)
        try h.eventually("the service's return to a third app is refused") { h.appOutput.contains("[x-sadun-services] did not return to test.liar at third") }
        #expect(!(try h.running().map(\.id).contains("test.third")))
    }

    @Test("callbackPolicy flag: the request is delivered with a warning the apps can see")
    func flagPolicy() throws {
        let h = try DaemonHarness(apps: [try .demo("wordrev"), .test("third")], config: #"{"callbackPolicy": "flag"}"#)
        defer { h.stop() }
        let run = try h.lsopen("wordrev://x-callback-url/reverse?word=ab&x-success=third%3A%2F%2Fgot")
        #expect(run.status == 0, "\(run.stderr)")
        try h.eventually("the third app receives the flagged callback") {
            h.eventNames().contains { $0.hasPrefix("open url=third://got?word=ba source=com.example.wordrev") && $0.contains("warning=the reply callback") }
        }
        #expect(h.appOutput.contains("[wordrev] warning from launchservicesd: the x-success callback 'third://got' opens in test.third"))
    }
}
