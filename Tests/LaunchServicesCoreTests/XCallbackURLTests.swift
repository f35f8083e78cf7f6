import LaunchServicesCore
import Testing

@Suite("x-callback-url")
struct XCallbackURLTests {
    @Test("parses the seed's wordrev request: callbacks, source and the action's parameter")
    func parseSeed() throws {
        let url = try ParsedURL("x-callback-wordrev://x-callback-url/reverse?x-source=SchemeDemo&x-success=schemedemo%3A%2F%2Fsuccess&x-error=schemedemo://error&x-cancel=schemedemo://cancel&word=hello%20world")
        let r = try XCallbackRequest(url)
        #expect(r.scheme.normalized == "x-callback-wordrev")
        #expect(r.action == "reverse")
        #expect(r.source == "SchemeDemo")
        #expect(r.success == "schemedemo://success")
        #expect(r.error == "schemedemo://error")
        #expect(r.cancel == "schemedemo://cancel")
        #expect(r.parameter("word") == "hello world")
        #expect(r.parameters.count == 1)
    }

    @Test("x- parameter names are read in any case, so no spelling hides a callback")
    func caseInsensitiveNames() throws {
        let r = try XCallbackRequest(try ParsedURL("svc://x-callback-url/act?X-Source=Me&X-Success=a://ok&X-ERROR=a://err&x-Cancel=a://cancel&Word=1"))
        #expect(r.source == "Me")
        #expect(r.success == "a://ok")
        #expect(r.error == "a://err")
        #expect(r.cancel == "a://cancel")
        #expect(r.parameters == [QueryItem(name: "Word", value: "1")], "action parameters keep their names")
    }

    @Test("an action may be empty, as in the seed's first form")
    func emptyAction() throws {
        let r = try XCallbackRequest(try ParsedURL("wordrev://x-callback-url?word=a"))
        #expect(r.action == "")
        #expect(r.parameter("word") == "a")
    }

    @Test("a callback URL carrying its own query and fragment survives both ways")
    func nestedQuery() throws {
        let callback = "app://done?session=1&x=a%26b#frag"
        let built = XCallbackRequest(scheme: try URLScheme(validating: "svc"), action: "do it", source: "Me", success: callback,
                                     parameters: [QueryItem(name: "q", value: "1+1=2 & more")])
        #expect(built.url.hasPrefix("svc://x-callback-url/do%20it?x-source=Me&x-success=app%3A%2F%2Fdone%3Fsession%3D1%26x%3Da%2526b%23frag&q="))
        let parsed = try XCallbackRequest(try ParsedURL(built.url))
        #expect(parsed == built)
        #expect(parsed.successReply([QueryItem(name: "word", value: "dlrow olleh")]) == "app://done?session=1&x=a%26b&word=dlrow%20olleh#frag")
    }

    @Test("replies: success appends results, error appends errorCode and errorMessage, cancel is as given")
    func replies() throws {
        let r = try XCallbackRequest(try ParsedURL("svc://x-callback-url/act?x-success=a://ok&x-error=a://err?x=1&x-cancel=a://cancel"))
        #expect(r.successReply() == "a://ok")
        #expect(r.successReply([QueryItem(name: "k", value: "v w")]) == "a://ok?k=v%20w")
        #expect(r.errorReply(code: "42", message: "no such word") == "a://err?x=1&errorCode=42&errorMessage=no%20such%20word")
        #expect(r.cancelReply == "a://cancel")
        let none = try XCallbackRequest(try ParsedURL("svc://x-callback-url/act"))
        #expect(none.successReply() == nil && none.errorReply(code: "1", message: "m") == nil && none.cancelReply == nil)
    }

    @Test("a URL whose host is not x-callback-url is refused, naming it")
    func notXCallback() throws {
        #expect(throws: XCallbackError.notXCallback("svc://other/act")) { try XCallbackRequest(try ParsedURL("svc://other/act")) }
        #expect(XCallbackError.notXCallback("svc:x").description.contains("'svc:x'"))
    }
}
