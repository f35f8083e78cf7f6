import LaunchServicesApp
import LaunchServicesTesting
import Testing

/// A small shop-list app: `shop://add?title=…` adds an item, `shop://copy?text=…` and
/// `shop://paste` use the general pasteboard, `shop://x-callback-url/reverse?word=…` replies
/// to its caller. It records every delegate call.
@MainActor
final class ShopDelegate: ApplicationDelegate {
    var calls: [String] = []
    var items: [String] = []
    var pasted: String?
    var replies: [OpenOutcome] = []
    var refuseAt: LaunchPhase?

    func willFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        calls.append("willFinishLaunching \(options.urlString) from \(options.sourceApplication)")
        return refuseAt != .willFinishLaunching
    }
    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        calls.append("didFinishLaunching")
        return refuseAt != .didFinishLaunching
    }
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        calls.append("open \(url) from \(sourceApplication ?? "nil")")
        if let request = application.callbackRequest(url, sourceApplication: sourceApplication) {
            guard let word = request.parameter("word") else {
                return application.reply(request, .error(code: "missingWord", message: "give word"))
            }
            return application.reply(request, .success([QueryItem(name: "word", value: String(word.reversed()))])) { self.replies.append($0) }
        }
        switch url.host {
        case "add":
            guard let title = url.queryValue("title") else { return false }
            items.append(title)
            return true
        case "copy":
            return (try? application.pasteboard().copy(text: url.queryValue("text") ?? "")) != nil
        case "paste":
            pasted = try? application.pasteboard().text()
            return pasted != nil
        default:
            return false
        }
    }
    func didBecomeActive(_ application: Application) { calls.append("didBecomeActive") }
    func willResignActive(_ application: Application) { calls.append("willResignActive") }
    func didEnterBackground(_ application: Application) { calls.append("didEnterBackground") }
    func willEnterForeground(_ application: Application) { calls.append("willEnterForeground") }
    func willTerminate(_ application: Application) { calls.append("willTerminate") }
}

/// Implements no URL method at all.
final class BareDelegate: ApplicationDelegate {}

/// Implements only the legacy URL method.
final class LegacyDelegate: ApplicationDelegate {
    var urls: [String] = []
    func handleOpen(_ application: Application, url: ParsedURL) -> Bool {
        urls.append(url.string)
        return true
    }
}

@MainActor
func shopDriver() -> AppDriver<ShopDelegate> {
    AppDriver(delegate: ShopDelegate(), bundleID: "com.example.shop", schemes: ["Shop"])
}

@MainActor
@Suite struct AppDriverTests {
    @Test func coldOpenRunsTheLaunchMethodsThenActivatesThenDelivers() throws {
        let app = shopDriver()
        #expect(app.state == .launching)
        let outcome = try app.open("shop://add?title=milk", from: "com.example.notes")
        #expect(outcome.events == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .openURL])
        #expect(outcome.launched)
        #expect(outcome.accepted)
        #expect(outcome.method == .open)
        #expect(outcome.vetoedIn == nil)
        #expect(outcome.errorCode == nil)
        #expect(app.delegate.calls == [
            "willFinishLaunching shop://add?title=milk from com.example.notes",
            "didFinishLaunching",
            "didBecomeActive",
            "open shop://add?title=milk from com.example.notes",
        ])
        #expect(app.delegate.items == ["milk"])
        #expect(app.state == .active)
        #expect(app.application.bundleIdentifier == "com.example.shop")
    }

    @Test func warmOpenOfTheActiveAppOnlyDelivers() throws {
        let app = shopDriver()
        try app.open("shop://add?title=milk")
        let second = try app.open("shop://add?title=eggs")
        #expect(second.events == [.openURL])
        #expect(!second.launched)
        #expect(second.accepted)
        #expect(app.delegate.items == ["milk", "eggs"])
        #expect(app.delegate.calls.last == "open shop://add?title=eggs from com.example.caller")
        #expect(app.events == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .openURL, .openURL])
    }

    @Test func warmOpenFromTheBackgroundComesToTheFrontFirst() throws {
        let app = shopDriver()
        try app.open("shop://add?title=milk")
        #expect(try app.sendToBackground() == [.willResignActive, .didEnterBackground])
        #expect(app.state == .background)
        let outcome = try app.open("shop://add?title=eggs")
        #expect(outcome.events == [.willEnterForeground, .didBecomeActive, .openURL])
        #expect(app.state == .active)
        #expect(Array(app.delegate.calls.suffix(5)) == ["willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive", "open shop://add?title=eggs from com.example.caller"])
    }

    @Test func urlMethodReturningFalseIsNotAccepted() throws {
        let app = shopDriver()
        let outcome = try app.open("shop://remove?title=milk")
        #expect(!outcome.accepted)
        #expect(outcome.method == .open)
        #expect(outcome.errorCode == .notHandled)
        #expect(app.delegate.items == [])
    }

    @Test(arguments: [LaunchPhase.willFinishLaunching, .didFinishLaunching])
    func launchMethodVetoStopsTheDelivery(phase: LaunchPhase) throws {
        let app = shopDriver()
        app.delegate.refuseAt = phase
        let outcome = try app.open("shop://add?title=milk")
        #expect(outcome.vetoedIn == phase)
        #expect(!outcome.accepted)
        #expect(outcome.method == nil)
        #expect(outcome.errorCode == .vetoed)
        // The app still finishes launching and becomes active, as with the daemon.
        #expect(outcome.events == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
        #expect(app.delegate.items == [])
        #expect(app.state == .active)
    }

    @Test func callbackReplyIsRecordedNotSent() throws {
        let app = shopDriver()
        let outcome = try app.open("shop://x-callback-url/reverse?word=milk&x-success=notes%3A%2F%2Fdone%3Fid%3D7", from: "com.example.notes")
        #expect(outcome.accepted)
        #expect(app.callbacks == ["notes://done?id=7&word=klim"])
        #expect(app.opens == [AppOpenRequest(url: "notes://done?id=7&word=klim", annotation: nil, returnTo: "com.example.notes")])
        #expect(app.opens.first?.parsedURL?.queryValue("word") == "klim")
        // The completion ran with the driver's default answer: opened by the caller.
        #expect(app.delegate.replies == [OpenOutcome(app: "com.example.notes", method: .open)])
    }

    @Test func callbackErrorReplyCarriesTheCodeAndMessage() throws {
        let app = shopDriver()
        try app.open("shop://x-callback-url/reverse?x-error=notes%3A%2F%2Ffailed", from: "com.example.notes")
        #expect(app.callbacks == ["notes://failed?errorCode=missingWord&errorMessage=give%20word"])
    }

    @Test func openResponderAnswersTheAppsOpens() throws {
        let app = shopDriver()
        app.openResponder = { .failure(OpenError(.notPermitted, "not \($0.returnTo ?? "-")")) }
        try app.open("shop://x-callback-url/reverse?word=ab&x-success=notes%3A%2F%2Fdone", from: "com.example.notes")
        #expect(app.delegate.replies == [.failure(OpenError(.notPermitted, "not com.example.notes"))])
    }

    @Test func pasteboardCopyThenPasteGoThroughTheAppsPasteboardAPI() throws {
        let app = shopDriver()
        #expect(try app.open("shop://copy?text=milk%202l").accepted)
        #expect(app.pasteboards.text() == "milk 2l")
        #expect(app.pasteboards.changeCount() == 1)
        #expect(try app.open("shop://paste").accepted)
        #expect(app.delegate.pasted == "milk 2l")
        #expect(app.pasteboards.requests.map(\.operation) == [.copy, .paste])
        // Another app (the test) replaces it; the app sees the new text.
        try app.pasteboards.copy(text: "eggs")
        try app.open("shop://paste")
        #expect(app.delegate.pasted == "eggs")
        #expect(app.pasteboards.changeCount() == 2)
    }

    @Test func pasteboardRefusalsReachTheAppAsTheDaemonsErrors() throws {
        let app = shopDriver()
        try app.pasteboards.copy(text: "secret", named: "vault", password: "pw")
        try app.open("shop://add?title=x")
        let board = app.application.pasteboard(named: "vault")
        #expect(throws: ClientError.self) { try board.text() }
        do {
            _ = try board.text(password: "wrong")
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(error.code == .notPermitted)
        }
        #expect(try board.text(password: "pw") == "secret")
    }

    /// The daemon opens an app that implements no URL method (running it was the point);
    /// the driver once answered `notHandled` here, disagreeing with it.
    @Test func appImplementingNoURLMethodIsOpenedWithMethodNoneAsByTheDaemon() throws {
        let app = AppDriver(delegate: BareDelegate(), bundleID: "com.example.bare", schemes: ["bare"])
        let outcome = try app.open("bare://anything")
        #expect(outcome.method == DeliveryMethod.none)
        #expect(!outcome.accepted)
        #expect(outcome.errorCode == nil)
    }

    @Test func legacyOnlyAppGetsHandleOpen() throws {
        let app = AppDriver(delegate: LegacyDelegate(), bundleID: "com.example.old", schemes: ["old"])
        let outcome = try app.open("old://x")
        #expect(outcome.method == .handleOpen)
        #expect(outcome.accepted)
        #expect(app.delegate.urls == ["old://x"])
    }

    @Test func backgroundAndTerminateSendTheirNotifications() throws {
        let app = shopDriver()
        try app.open("shop://add?title=milk")
        app.delegate.calls = []
        #expect(try app.sendToBackground() == [.willResignActive, .didEnterBackground])
        #expect(try app.sendToBackground() == [])
        #expect(app.terminate() == [.willTerminate])
        #expect(app.delegate.calls == ["willResignActive", "didEnterBackground", "willTerminate"])
        #expect(app.state == .notRunning)
        #expect(throws: AppDriverError.terminated) { try app.open("shop://add?title=eggs") }
        #expect(app.terminate() == [])
    }

    @Test func bringToForegroundActivatesABackgroundApp() throws {
        let app = shopDriver()
        #expect(try app.bringToForeground() == [])
        try app.open("shop://add?title=milk")
        try app.sendToBackground()
        #expect(try app.bringToForeground() == [.willEnterForeground, .didBecomeActive])
        #expect(try app.bringToForeground() == [])
    }

    @Test func urlsOfOtherSchemesAreRefused() throws {
        let app = shopDriver()
        #expect(throws: AppDriverError.schemeNotClaimed(scheme: "todo", claimed: ["shop"])) { try app.open("todo://add") }
        #expect(throws: AppDriverError.self) { try app.open("not a url") }
        #expect(app.events == [])
    }

    @Test func canOpenURLAnswersFromTheInstalledSchemes() throws {
        let app = AppDriver(delegate: BareDelegate(), bundleID: "com.example.bare", schemes: ["bare"], installedSchemes: ["maps"])
        #expect(app.application.canOpenURL("maps://here"))
        #expect(!app.application.canOpenURL("bare://x"))
        app.installedSchemes.insert("bare")
        #expect(app.application.canOpenURL("bare://x"))
        #expect(app.canOpenQueries == ["maps://here", "bare://x", "bare://x"])
    }

    @Test func deliveryWarningIsVisibleDuringOpen() throws {
        final class WarningDelegate: ApplicationDelegate {
            var seen: [String?] = []
            func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
                seen.append(application.callbackRequest(url, sourceApplication: sourceApplication)?.warning)
                return true
            }
        }
        let app = AppDriver(delegate: WarningDelegate(), bundleID: "com.example.w", schemes: ["w"])
        try app.open("w://x-callback-url/a?x-success=evil%3A%2F%2F", warning: "x-success goes to evil")
        #expect(app.delegate.seen == ["x-success goes to evil"])
        #expect(app.application.currentDeliveryWarning == nil)
    }
}
