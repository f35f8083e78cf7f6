import LaunchServicesApp
import LaunchServicesProtocol
import Testing

/// Unit tests of the runtime's one dispatch, `Application.handle(_:)`, with a recording
/// `ApplicationOutbound`: what each daemon message runs and what goes back.
@MainActor
final class RecordingOutbound: ApplicationOutbound {
    var sent: [Message] = []
    var failing = false
    var nextID: UInt32 = 40

    func sendOpen(url: String, annotation: PropertyListValue?, returnTo: String?) throws(ClientError) -> UInt32 {
        if failing { throw .connectionClosed(waitingFor: "test") }
        sent.append(.open(url: url, annotation: annotation, returnTo: returnTo))
        nextID += 1
        return nextID
    }
    func canOpen(url: String) throws(ClientError) -> Bool {
        if failing { throw .refused(OpenError(.invalidURL, "bad")) }
        sent.append(.canOpen(url: url))
        return true
    }
    func pasteboard(_ request: PasteboardRequest) throws(ClientError) -> PasteboardSnapshot {
        sent.append(.pasteboard(request))
        return PasteboardSnapshot(name: request.name ?? "general", changeCount: 3, items: [])
    }
}

@MainActor
final class TraceDelegate: ApplicationDelegate {
    var calls: [String] = []
    var answer = true
    func willFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        calls.append("will \(options.urlString) \(options.sourceApplication) \(options.annotation?.description ?? "nil") \(options.url?.host ?? "nil")")
        return answer
    }
    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        calls.append("did")
        return answer
    }
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        calls.append("open \(url) \(sourceApplication ?? "nil") warning=\(application.currentDeliveryWarning ?? "nil")")
        return answer
    }
    func didBecomeActive(_ application: Application) { calls.append("active \(application.state)") }
    func willResignActive(_ application: Application) { calls.append("resign \(application.state)") }
    func didEnterBackground(_ application: Application) { calls.append("background \(application.state)") }
    func willEnterForeground(_ application: Application) { calls.append("foreground \(application.state)") }
    func willTerminate(_ application: Application) { calls.append("terminate \(application.state)") }
}

@MainActor
@Suite struct ApplicationDispatchTests {
    let outbound = RecordingOutbound()
    let delegate = TraceDelegate()
    let application: Application

    init() {
        application = Application(bundleIdentifier: "unknown", outbound: outbound, delegate: delegate)
    }

    @Test func launchMethodsRunTheirDelegateMethodAndAnswerWithoutAMethod() throws {
        let delivery = Delivery(url: "x://h/p", sourceApplication: "com.src", annotation: .string("a"))
        #expect(try application.handle(Envelope(id: 2, .launchMethod(.willFinishLaunching, delivery))) == .phaseResult(accepted: true, method: nil))
        delegate.answer = false
        #expect(try application.handle(Envelope(id: 3, .launchMethod(.didFinishLaunching, delivery))) == .phaseResult(accepted: false, method: nil))
        #expect(delegate.calls == ["will x://h/p com.src \(PropertyListValue.string("a")) h", "did"])
    }

    @Test func deliverRunsOpenWithTheWarningSetOnlyMeanwhile() throws {
        let reply = try application.handle(Envelope(id: 4, .deliver(Delivery(url: "x:hi", sourceApplication: "com.src", warning: "careful"))))
        #expect(reply == .phaseResult(accepted: true, method: .open))
        #expect(delegate.calls == ["open x:hi com.src warning=careful"])
        #expect(application.currentDeliveryWarning == nil)
    }

    @Test("after a NO from a launch method, the launch's own delivery (ofLaunch) is dropped unanswered; the launch's didBecomeActive and later deliveries still run",
          arguments: [LaunchPhase.willFinishLaunching, .didFinishLaunching])
    func vetoedLaunchDropsItsDelivery(vetoedIn: LaunchPhase) throws {
        let delivery = Delivery(url: "x:secret", sourceApplication: "com.src")
        delegate.answer = vetoedIn != .willFinishLaunching
        _ = try application.handle(Envelope(id: 2, .launchMethod(.willFinishLaunching, delivery)))
        delegate.answer = vetoedIn != .didFinishLaunching
        _ = try application.handle(Envelope(id: 3, .launchMethod(.didFinishLaunching, delivery)))
        delegate.answer = true
        #expect(try application.handle(Envelope(id: 0, .notify(.didBecomeActive))) == nil)
        #expect(try application.handle(Envelope(id: 4, .deliver(Delivery(url: "x:secret", sourceApplication: "com.src", ofLaunch: true)))) == nil)
        #expect(try application.handle(Envelope(id: 5, .deliver(Delivery(url: "x:later", sourceApplication: "com.src")))) == .phaseResult(accepted: true, method: .open))
        #expect(delegate.calls.dropFirst(2) == ["active active", "open x:later com.src warning=nil"])
    }

    @Test("with both launch methods YES, the launch's own delivery runs like any other")
    func acceptedLaunchRunsItsDelivery() throws {
        let delivery = Delivery(url: "x:hi", sourceApplication: "com.src")
        _ = try application.handle(Envelope(id: 2, .launchMethod(.willFinishLaunching, delivery)))
        _ = try application.handle(Envelope(id: 3, .launchMethod(.didFinishLaunching, delivery)))
        #expect(try application.handle(Envelope(id: 4, .deliver(Delivery(url: "x:hi", sourceApplication: "com.src", ofLaunch: true)))) == .phaseResult(accepted: true, method: .open))
        #expect(delegate.calls.last == "open x:hi com.src warning=nil")
    }

    @Test func deliverToAnAppWithNoURLMethodAnswersNone() throws {
        final class Bare: ApplicationDelegate {}
        let bare = Bare()
        let app = Application(bundleIdentifier: "b", outbound: outbound, delegate: bare)
        #expect(try app.handle(Envelope(id: 9, .deliver(Delivery(url: "x:hi", sourceApplication: "s")))) == .phaseResult(accepted: false, method: DeliveryMethod.none))
    }

    @Test func notificationsMoveTheStateBeforeTheDelegateRuns() throws {
        for notification: AppNotification in [.didBecomeActive, .willResignActive, .didEnterBackground, .willEnterForeground] {
            #expect(try application.handle(Envelope(id: 0, .notify(notification))) == nil)
        }
        #expect(delegate.calls == ["active active", "resign inactive", "background background", "foreground inactive"])
        application.connectionClosed()
        #expect(delegate.calls.last == "terminate notRunning")
        #expect(application.state == .notRunning)
    }

    @Test func welcomeSetsTheIdentity() throws {
        #expect(try application.handle(Envelope(id: 0, .welcome(version: 1, identity: "com.example.real"))) == nil)
        #expect(application.bundleIdentifier == "com.example.real")
        #expect(application.state == .launching)
    }

    @Test func openResultsReachTheirCompletionOnce() throws {
        var outcomes: [OpenOutcome] = []
        application.open("y:1", returningTo: "com.back") { outcomes.append($0) }
        application.open("y:2") { outcomes.append($0) }
        #expect(outbound.sent == [.open(url: "y:1", annotation: nil, returnTo: "com.back"), .open(url: "y:2", annotation: nil, returnTo: nil)])
        let failed = OpenError(.noHandler, "no app for y")
        _ = try application.handle(Envelope(id: 42, .failure(failed)))
        _ = try application.handle(Envelope(id: 41, .openResult(OpenOutcome(app: "com.y", method: .open))))
        _ = try application.handle(Envelope(id: 41, .openResult(OpenOutcome(app: "again"))))
        #expect(outcomes == [.failure(failed), OpenOutcome(app: "com.y", method: .open)])
    }

    @Test func anOpenThatCannotBeSentFailsAtOnce() {
        outbound.failing = true
        var outcomes: [OpenOutcome] = []
        application.open("y:1") { outcomes.append($0) }
        #expect(outcomes.map { $0.error?.code } == [.daemonUnreachable])
        #expect(!application.canOpenURL("y:1"))
    }

    @Test func requestsGoThroughTheOutbound() throws {
        #expect(application.canOpenURL("y:1"))
        #expect(try application.pasteboard(named: "n").clear() == 3)
        #expect(outbound.sent == [.canOpen(url: "y:1"), .pasteboard(PasteboardRequest(.clear, name: "n"))])
    }

    @Test func failureOnTheConnectionThrowsAndAppMessagesAreViolations() {
        #expect(throws: ClientError.self) { try application.handle(Envelope(id: 0, .failure(OpenError(.protocolError, "bye")))) }
        do {
            _ = try application.handle(Envelope(id: 5, .phaseResult(accepted: true, method: nil)))
            Issue.record("an app-to-daemon message was accepted")
        } catch {
            #expect(error.description.contains("phaseResult"))
        }
        #expect(delegate.calls == [])
    }
}
