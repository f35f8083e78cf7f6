import LaunchServicesCore
import Testing

/// The callback rule: a callback may only open in the app that asked for it.
@Suite("Callback protection")
struct CallbackProtectionTests {
    /// `schemedemo` opens in com.example.schemedemo, `third` in test.third; token `abc` is
    /// reserved by the shell identity.
    let check = CallbackCheck(
        handler: { ["schemedemo": "com.example.schemedemo", "third": "test.third", "shared": "test.third"][$0.normalized] },
        reservationOwner: { $0 == "abc" ? "org.swift-launch-services.lsopen" : nil })

    func url(_ text: String) throws -> ParsedURL { try ParsedURL(text) }

    @Test("callbacks that open in the source itself pass")
    func ownCallbacksPass() throws {
        let request = try url("wordrev://x-callback-url/reverse?word=a&x-success=schemedemo%3A%2F%2Fsuccess%3Fsession%3D1&x-error=schemedemo%3A%2F%2Ferror&x-cancel=schemedemo%3A%2F%2Fcancel")
        #expect(check.checkRequest(request, source: "com.example.schemedemo") == nil)
        #expect(check.checkRequest(try url("wordrev://x-callback-url/reverse?word=a"), source: "anyone") == nil, "no callbacks, nothing to check")
    }

    @Test("a URL without a query may carry no callbacks (the check is skipped for it); one with a query may, even when it has none")
    func mayCarryCallbacks() throws {
        for text in ["xyz:hello", "xyz://host/path#x-success=third%3A%2F%2Fsteal", "wordrev://x-callback-url/reverse?", "third:/a/x-success=third:steal"] {
            let request = try url(text)
            #expect(!CallbackCheck.mayCarryCallbacks(request), "\(text)")
            #expect(check.checkRequest(request, source: "com.example.schemedemo") == nil, "\(text)")
        }
        #expect(CallbackCheck.mayCarryCallbacks(try url("wordrev://x-callback-url/reverse?word=a")))
        #expect(CallbackCheck.mayCarryCallbacks(try url("wordrev://x?x-error=third%3A%2F%2Fsteal")))
        #expect(check.checkRequest(try url("wordrev://x?x-error=third%3A%2F%2Fsteal"), source: "com.example.schemedemo") != nil)
    }

    @Test("a callback to a third app's scheme is a violation naming the parameter, the URL and both apps")
    func thirdAppRefused() throws {
        let request = try url("wordrev://x-callback-url/reverse?x-success=schemedemo%3A%2F%2Fok&x-error=third%3A%2F%2Fsteal")
        let violation = try #require(check.checkRequest(request, source: "com.example.schemedemo"))
        #expect(violation.parameter == "x-error")
        #expect(violation.url == "third://steal")
        #expect(violation.message.contains("opens in test.third, not in com.example.schemedemo"))
    }

    @Test("any URL's x- callback parameters are checked, not only x-callback-url hosts")
    func anyHostChecked() throws {
        #expect(check.checkRequest(try url("wordrev://other/path?x-cancel=third:1"), source: "com.example.schemedemo") != nil)
    }

    @Test("callback parameter names are matched in any case: X-Success, X-ERROR, x-Cancel, x-ſuccess")
    func caseVariantsChecked() throws {
        for name in ["X-Success", "X-SUCCESS", "X-ERROR", "x-Cancel", "x-ſuccess", "X%2DSuccess"] {
            let request = try url("wordrev://x-callback-url/reverse?x-success=schemedemo%3A%2F%2Fok&\(name)=third%3A%2F%2Fsteal")
            let violation = try #require(check.checkRequest(request, source: "com.example.schemedemo"), "\(name)")
            #expect(violation.url == "third://steal")
            #expect(violation.parameter.lowercased().hasPrefix("x-"), "names the parameter as spelled: \(violation.parameter)")
        }
        #expect(CallbackCheck.callbackParameter("X-Success") == "x-success")
        #expect(CallbackCheck.callbackParameter("x-Error") == "x-error")
        #expect(CallbackCheck.callbackParameter("X-CANCEL") == "x-cancel")
        #expect(CallbackCheck.callbackParameter("x-source") == nil)
        #expect(CallbackCheck.callbackParameter("x-successful") == nil)
        #expect(check.checkRequest(try url("w://x-callback-url/a?X-Success=schemedemo%3A1"), source: "com.example.schemedemo") == nil, "an honest callback in capitals passes")
    }

    @Test("a scheme nobody handles, and a callback that is not a URL, are violations too")
    func unhandledAndInvalid() throws {
        let none = try #require(check.checkRequest(try url("w://x-callback-url/a?x-success=nobody%3A1"), source: "com.example.schemedemo"))
        #expect(none.message.contains("opens in no app"))
        let invalid = try #require(check.checkRequest(try url("w://x-callback-url/a?x-success=%20not%20a%20url"), source: "s"))
        #expect(invalid.message.contains("is not a valid URL"))
    }

    @Test("reserved callback addresses: only the reserving caller, only with a token")
    func reservedAddresses() throws {
        let mine = try url("w://x-callback-url/a?x-success=x-lsopen-callback%3A%2F%2Fabc%2Fsuccess")
        #expect(check.checkRequest(mine, source: "org.swift-launch-services.lsopen") == nil)
        let stolen = try #require(check.checkRequest(mine, source: "test.third"))
        #expect(stolen.message.contains("was reserved by org.swift-launch-services.lsopen, not by test.third"))
        let unknown = try #require(check.checkRequest(try url("w://x-callback-url/a?x-success=x-lsopen-callback%3A%2F%2Fzzz%2Fsuccess"), source: "x"))
        #expect(unknown.message.contains("nobody is waiting on"))
        let noToken = try #require(check.checkRequest(try url("w://x-callback-url/a?x-success=x-lsopen-callback%3Asuccess"), source: "x"))
        #expect(noToken.message.contains("without a token"))
    }

    @Test("a returning open must open in exactly the app it returns to")
    func returningOpen() {
        #expect(check.check("schemedemo://done", returningTo: "com.example.schemedemo", parameter: "reply") == nil)
        let wrong = check.check("shared://done", returningTo: "com.example.schemedemo", parameter: "reply")
        #expect(wrong?.message.contains("the reply callback 'shared://done' opens in test.third") == true)
    }

    @Test("callback address tokens and the reserved scheme")
    func addresses() throws {
        #expect(CallbackAddress.token(of: try url("x-lsopen-callback://0123abcd/success")) == "0123abcd")
        #expect(CallbackAddress.token(of: try url("X-LSOPEN-CALLBACK://t/error")) == "t", "schemes match case-insensitively")
        #expect(CallbackAddress.token(of: try url("other://0123abcd/success")) == nil)
        #expect(CallbackAddress.base(token: "t") == "x-lsopen-callback://t")
    }

    @Test("no app may declare the reserved scheme")
    func bundleCannotDeclareReservedScheme() {
        let plist = InfoPlist(bundleIdentifier: "evil.app", bundleExecutable: "evil", urlTypes: [InfoPlist.URLType(name: nil, schemes: ["X-LSOPEN-CALLBACK"])])
        let error = #expect(throws: BundleError.self) { try AppBundle(validating: plist, path: "/a/evil.app") }
        #expect(error?.problem.contains("keeps for lsopen --wait callbacks") == true)
    }
}
