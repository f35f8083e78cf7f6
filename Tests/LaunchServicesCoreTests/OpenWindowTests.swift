import LaunchServicesCore
import Testing

/// Several opens in flight to one launched app (`maximumOpensInFlight`): each event in, the
/// exact actions out. The app has one deadline timer, for its oldest open, which gets its
/// whole deadline once the open before it is answered; every open is still answered once,
/// with its own outcome.
@Suite("Open window: several opens in flight to one app, exact actions")
struct OpenWindowTests {
    typealias Action = LaunchStateMachine.Action
    static let second: UInt64 = 1_000_000_000
    static let deadlines = PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(4), openURL: .seconds(3))

    func machine(window: Int = 3) -> LaunchStateMachine {
        LaunchStateMachine(deadlines: Self.deadlines, maximumOpensInFlight: window)
    }

    func request(_ token: LaunchToken, caller: UInt64 = 0) -> OpenRequest {
        OpenRequest(token: token, url: "x:\(token)", sourceApplication: "src", caller: caller)
    }

    /// The token numbered `n`, for tokens counted in a loop.
    func t(_ n: UInt64) -> LaunchToken { LaunchToken(requestID: UInt32(n))! }

    func opened(_ token: LaunchToken, _ nanoseconds: UInt64) -> Action {
        .reply(requestToken: token, OpenOutcome(app: "a", launched: false, method: .open, timings: [PhaseTiming(phase: .openURL, nanoseconds: nanoseconds)], launchState: .hot))
    }

    /// `a` launched cold for open 1 (phase tokens 1–4) and answered at time 40: active,
    /// frontmost, pid 42, nothing in flight; the next phase token is 5.
    func launched(window: Int = 3) -> LaunchStateMachine {
        var m = machine(window: window)
        _ = m.open(request(1), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 10)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 20)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 30)
        _ = m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 40)
        return m
    }

    /// `launched()`, then opens 10, 11, 12 in flight (tokens 5, 6, 7, sent at 100, 110, 120)
    /// and open 13 queued behind the full window.
    func windowFull() -> LaunchStateMachine {
        var m = launched()
        _ = m.open(request(10), app: "a", now: 100)
        _ = m.open(request(11), app: "a", now: 110)
        _ = m.open(request(12), app: "a", now: 120)
        _ = m.open(request(13), app: "a", now: 130)
        return m
    }

    @Test("opens join those in flight up to the window, the rest queue; one deadline timer, for the oldest, moves as the oldest is answered")
    func windowFillsAndDrains() {
        var m = launched()
        #expect(m.open(request(10), app: "a", now: 100) == [
            .armDeadline(app: "a", phase: .openURL, token: 5, after: .seconds(3)),
            .deliver(app: "a", token: 5, request: request(10)),
        ])
        #expect(m.open(request(11), app: "a", now: 110) == [.deliver(app: "a", token: 6, request: request(11))])
        #expect(m.open(request(12), app: "a", now: 120) == [.deliver(app: "a", token: 7, request: request(12))])
        #expect(m.open(request(13), app: "a", now: 130).isEmpty, "the window is full")
        #expect(m.apps["a"]?.opensInFlight == 3)
        #expect(m.apps["a"]?.pendingOpens == 4)
        #expect(m.waitingRequests == [10, 11, 12, 13])

        // The oldest answered: its caller hears it, the timer moves to the next oldest (its
        // whole 3 s, from now: the app starts on it only now), and the queued open takes the
        // free place.
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 1_000) == [
            opened(10, 900),
            .armDeadline(app: "a", phase: .openURL, token: 6, after: .seconds(3)),
            .deliver(app: "a", token: 8, request: request(13)),
        ])
        // Answered out of order: only that caller hears, the timer stays where it is.
        #expect(m.phaseCompleted(app: "a", token: 7, accepted: false, method: .open, now: 1_100) == [
            .reply(requestToken: 12, OpenOutcome(app: "a", error: OpenError(.notHandled, phase: .openURL, "a did not handle x:12: open(url:sourceApplication:annotation:) returned NO"),
                                                 method: .open, timings: [PhaseTiming(phase: .openURL, nanoseconds: 980)], launchState: .hot)),
        ])
        #expect(m.phaseCompleted(app: "a", token: 7, accepted: true, method: .open, now: 1_150).isEmpty, "answered once")
        #expect(m.phaseCompleted(app: "a", token: 6, accepted: true, method: .open, now: 1_200) == [
            opened(11, 1_090),
            .armDeadline(app: "a", phase: .openURL, token: 8, after: .seconds(3)),
        ])
        #expect(m.phaseCompleted(app: "a", token: 8, accepted: true, method: .open, now: 1_300) == [opened(13, 300)])
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.deadlinePassed(app: "a", token: 6, now: 4 * Self.second).isEmpty, "a timer of an answered open is stale")
        #expect(m.state(of: "a") == .active)
    }

    @Test("a launch has no company: opens queued behind it fill the window once it has finished launching")
    func launchThenWindow() {
        var m = machine()
        _ = m.open(request(1), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        for n in 2...5 as ClosedRange<UInt64> {
            #expect(m.open(request(t(n)), app: "a", now: n).isEmpty, "queued behind the launch")
        }
        #expect(m.checkedIn(app: "a", now: 10) == [
            .armDeadline(app: "a", phase: .willFinishLaunching, token: 2, after: .seconds(5)),
            .sendLaunchMethod(app: "a", phase: .willFinishLaunching, token: 2, options: request(1)),
        ])
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 20)
        #expect(m.phaseCompleted(app: "a", token: 3, accepted: true, now: 30) == [
            .notify(app: "a", .didBecomeActive),
            .armDeadline(app: "a", phase: .openURL, token: 4, after: .seconds(3)),
            .deliver(app: "a", token: 4, request: request(1)),
            .deliver(app: "a", token: 5, request: request(2)),
            .deliver(app: "a", token: 6, request: request(3)),
        ])
        #expect(m.waitingRequests == [1, 2, 3, 4, 5])
        #expect(m.apps["a"]?.opensInFlight == 3)
    }

    @Test("the app hangs on the 2nd of 3 in flight: timeout for it and for the one sent behind it, the app terminated; a late answer is ignored; queued opens launch it afresh")
    func hangInWindow() {
        var m = windowFull()
        _ = m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 1_000)
        // Now 11, 12 and 13 (token 8, sent at 1,000) are in flight; 11's deadline, 3 s from
        // the answer to 10, passes.
        let at = 3 * Self.second + 1_000
        let behind = "a was terminated before it answered this open: it did not finish openURL of another open within 3 s"
        #expect(m.deadlinePassed(app: "a", token: 6, now: at) == [
            .reply(requestToken: 11, .failure(OpenError(.timeout, phase: .openURL, "a did not finish openURL within 3 s; it was terminated"),
                                              app: "a", timings: [PhaseTiming(phase: .openURL, nanoseconds: at - 110)], launchState: .hot)),
            .reply(requestToken: 12, .failure(OpenError(.timeout, phase: .openURL, behind),
                                              app: "a", timings: [PhaseTiming(phase: .openURL, nanoseconds: at - 120)], launchState: .hot)),
            .reply(requestToken: 13, .failure(OpenError(.timeout, phase: .openURL, behind),
                                              app: "a", timings: [PhaseTiming(phase: .openURL, nanoseconds: at - 1_000)], launchState: .hot)),
            .terminate(app: "a", pid: 42, reason: .missedDeadline(.openURL)),
        ])
        #expect(m.waitingRequests.isEmpty)
        #expect(m.phaseCompleted(app: "a", token: 7, accepted: true, method: .open, now: at + 1).isEmpty, "late: already answered")
        #expect(m.deadlinePassed(app: "a", token: 8, now: at + 2).isEmpty)
        #expect(m.open(request(14), app: "a", now: at + 3).isEmpty, "waits for the exit")
        #expect(m.exited(app: "a", status: .signaled(9), now: at + 4) == [
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 9, after: .seconds(10)),
        ])
        #expect(m.waitingRequests == [14])
    }

    @Test("the app crashes with 3 in flight: each hears crashed, oldest first; the queued open launches a fresh process")
    func crashInWindow() {
        var m = windowFull()
        let crashed = { (token: LaunchToken, sent: UInt64) -> Action in
            .reply(requestToken: token, .failure(OpenError(.crashed, phase: .openURL, "a was killed by signal 11 (SIGSEGV) during openURL"),
                                                 app: "a", timings: [PhaseTiming(phase: .openURL, nanoseconds: 500 - sent)], launchState: .hot))
        }
        #expect(m.exited(app: "a", status: .signaled(11), now: 500) == [
            crashed(10, 100), crashed(11, 110), crashed(12, 120),
            .spawn(app: "a"),
            .armDeadline(app: "a", phase: .launch, token: 8, after: .seconds(10)),
        ])
        #expect(m.waitingRequests == [13])
        #expect(m.state(of: "a") == .launching)
    }

    @Test("fairness: a freed place goes to the caller whose turn it is, not to the flooder's next open")
    func fairWindow() {
        var m = launched(window: 2)
        for n in 10...14 as ClosedRange<UInt64> { _ = m.open(request(t(n), caller: 1), app: "a", now: n) }
        _ = m.open(request(20, caller: 2), app: "a", now: 20)
        #expect(m.waitingRequests == [10, 11, 20, 12, 13, 14])
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 100) == [
            opened(10, 90),
            .armDeadline(app: "a", phase: .openURL, token: 6, after: .seconds(3)),
            .deliver(app: "a", token: 7, request: request(20, caller: 2)),
        ])
    }

    @Test("quit with opens in flight: the queued and every in-flight caller hear unavailable")
    func quitInWindow() {
        var m = windowFull()
        let quit = m.quit(app: "a", grace: .seconds(2), now: 200)
        let during = { (token: LaunchToken) -> Action in
            .reply(requestToken: token, .failure(OpenError(.unavailable, phase: .openURL, "a was asked to quit during openURL"), app: "a", launchState: .hot))
        }
        #expect(Array(quit.prefix(4)) == [
            .reply(requestToken: 13, .failure(OpenError(.unavailable, "a was asked to quit before this open began"), app: "a")),
            during(10), during(11), during(12),
        ])
        #expect(quit.dropFirst(4).first == .closeConnection(app: "a"))
        #expect(m.waitingRequests.isEmpty)
        #expect(m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 201).isEmpty, "answered already")
    }

    @Test("shutdown answers every open in flight and queued, once")
    func shutdownInWindow() {
        var m = windowFull()
        let unavailable = OpenOutcome.failure(OpenError(.unavailable, "launchservicesd is shutting down; the open in a was not completed"), app: "a")
        #expect(m.shutdown(now: 200) == [10, 11, 12, 13].map { .reply(requestToken: $0, unavailable) })
        #expect(m.phaseCompleted(app: "a", token: 6, accepted: true, method: .open, now: 201).isEmpty)
        #expect(m.open(request(14), app: "a", now: 202) == [
            .reply(requestToken: 14, .failure(OpenError(.unavailable, "launchservicesd is shutting down"), app: "a")),
        ])
    }

    @Test("no suspension with opens in flight: the grace is armed again, and suspends only once all are answered")
    func graceWaitsForWindow() throws {
        var m = LaunchStateMachine(deadlines: Self.deadlines, background: BackgroundPolicy(suspendAfter: .seconds(30)), maximumOpensInFlight: 3)
        _ = m.open(request(1), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 1)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 2)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 3)
        _ = m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 4)
        _ = m.open(request(10), app: "a", now: 10)
        _ = m.open(request(11), app: "a", now: 11)
        // Another app takes the front: a goes to the background with two opens in flight.
        var toFront = m.open(request(20), app: "b", now: 20)
        m.spawned(app: "b", pid: 43)
        toFront += m.checkedIn(app: "b", now: 21)
        toFront += m.phaseCompleted(app: "b", token: 8, accepted: true, now: 22)
        toFront += m.phaseCompleted(app: "b", token: 9, accepted: true, now: 23)
        guard let grace = toFront.lazy.compactMap({ action -> LaunchToken? in
            if case .armGrace("a", let token, _) = action { return token } else { return nil }
        }).first else {
            Issue.record("a got no grace: \(toFront)")
            return
        }
        #expect(m.state(of: "a") == .background)
        #expect(m.graceExpired(app: "a", token: grace, now: 30 * Self.second) == [.armGrace(app: "a", token: t(UInt64(grace.value) + 2), after: .seconds(30))])
        #expect(m.state(of: "a") == .background, "not suspended: opens are in flight")
        _ = m.phaseCompleted(app: "a", token: 5, accepted: true, method: .open, now: 30 * Self.second + 1)
        _ = m.phaseCompleted(app: "a", token: 6, accepted: true, method: .open, now: 30 * Self.second + 2)
        #expect(m.graceExpired(app: "a", token: t(UInt64(grace.value) + 2), now: 60 * Self.second) == [.suspend(app: "a", pid: 42)])
    }
}

/// A flood: many more opens than the window to an app that handles them one at a time. Each
/// open's deadline measures the app's progress on it, from when the app could start on it —
/// its delivery, or the answer to the open before it, whichever is later — not the time it
/// spent behind the others.
extension OpenWindowTests {
    static let floodDeadlines = PhaseDeadlines(launch: .seconds(10), willFinishLaunching: .seconds(5), didFinishLaunching: .seconds(5), openURL: .seconds(2))

    /// `a` launched as in `launched()` (tokens 1–4, answered at 40), with a 2 s `openURL`
    /// deadline and a window of 16; then 40 opens from 4 callers in turn, at 100 + n.
    /// Returns the machine and the phase token each open was delivered under (by request
    /// token 1000 + n), the first 16 at once.
    func flooded() -> (LaunchStateMachine, [LaunchToken: LaunchToken]) {
        var m = LaunchStateMachine(deadlines: Self.floodDeadlines, maximumOpensInFlight: 16)
        _ = m.open(request(1), app: "a", now: 0)
        m.spawned(app: "a", pid: 42)
        _ = m.checkedIn(app: "a", now: 10)
        _ = m.phaseCompleted(app: "a", token: 2, accepted: true, now: 20)
        _ = m.phaseCompleted(app: "a", token: 3, accepted: true, now: 30)
        _ = m.phaseCompleted(app: "a", token: 4, accepted: true, method: .open, now: 40)
        var delivered: [LaunchToken: LaunchToken] = [:]
        for n in 0..<40 as Range<UInt64> {
            let actions = m.open(request(t(1000 + n), caller: n % 4), app: "a", now: 100 + n)
            for case .deliver(_, let token, let request) in actions { delivered[request.token] = token }
        }
        return (m, delivered)
    }

    @Test("40 opens from 4 callers, the app answering each 0.4 s after the one before (2 s deadline, window 16): each answer arms the next open's full 2 s and sends the next queued one; none times out")
    func floodOfSlowOpens() throws {
        var (m, delivered) = flooded()
        #expect(delivered.count == 16, "a full window")
        #expect(m.apps["a"]?.opensInFlight == 16)
        #expect(m.apps["a"]?.pendingOpens == 40)
        // The callers took turns and each kept its order, so the opens run in the order sent.
        var nextToken = t(5 + 16)
        var sentAt = Dictionary(uniqueKeysWithValues: (0..<16 as Range<UInt64>).map { (1000 + $0, 100 + $0) })
        var armed = (token: try #require(delivered[t(1000)]), due: 100 + 2 * Self.second)
        for n in 0..<40 as Range<UInt64> {
            let now = 100 + (n + 1) * 400_000_000
            let token = try #require(delivered[t(1000 + n)])
            // The app answers in order: open n is the oldest, and its deadline is the one armed.
            #expect(armed.token == token)
            #expect(now < armed.due, "open \(n)'s deadline would have passed before its answer")
            var expected: [Action] = [.reply(requestToken: t(1000 + n), OpenOutcome(app: "a", launched: false, method: .open, timings: [PhaseTiming(phase: .openURL, nanoseconds: now - sentAt[1000 + n]!)], launchState: .hot))]
            if n + 1 < 40 {
                let next = try #require(delivered[t(1000 + n + 1)])
                expected.append(.armDeadline(app: "a", phase: .openURL, token: next, after: .seconds(2)))
                armed = (next, now + 2 * Self.second)
            }
            if n + 16 < 40 {
                expected.append(.deliver(app: "a", token: nextToken, request: request(t(1000 + n + 16), caller: (n + 16) % 4)))
                delivered[t(1000 + n + 16)] = nextToken
                sentAt[1000 + n + 16] = now
                nextToken = nextToken.successor
            }
            #expect(m.phaseCompleted(app: "a", token: token, accepted: true, method: .open, now: now) == expected, "open \(n)")
        }
        #expect(m.apps["a"]?.pendingOpens == 0)
        #expect(m.state(of: "a") == .active)
    }

    @Test("the same flood, the app hung in its 6th open: its deadline, 2 s after the 5th was answered, ends the app; every open in flight hears timeout; the queued ones wait for the exit and launch a fresh copy")
    func floodHangs() throws {
        var (m, delivered) = flooded()
        for n in 0..<5 as Range<UInt64> {
            _ = m.phaseCompleted(app: "a", token: try #require(delivered[t(1000 + n)]), accepted: true, method: .open, now: 100 + (n + 1) * 400_000_000)
        }
        #expect(m.apps["a"]?.opensInFlight == 16)
        #expect(m.apps["a"]?.pendingOpens == 35)
        let fifth = 100 + 5 * 400_000_000 as UInt64
        let hung = try #require(delivered[t(1005)])
        #expect(m.isRunning(app: "a", phaseToken: hung))
        #expect(!m.isRunning(app: "a", phaseToken: try #require(delivered[t(1004)])), "answered: its phase is over")
        let at = fifth + 2 * Self.second
        let actions = m.deadlinePassed(app: "a", token: hung, now: at)
        let behind = "a was terminated before it answered this open: it did not finish openURL of another open within 2 s"
        var expected: [Action] = [.reply(requestToken: 1005, .failure(OpenError(.timeout, phase: .openURL, "a did not finish openURL within 2 s; it was terminated"),
                                                                      app: "a", timings: [PhaseTiming(phase: .openURL, nanoseconds: at - 105)], launchState: .hot))]
        for n in 6..<21 as Range<UInt64> {
            let sent = n < 16 ? 100 + n : 100 + (n - 15) * 400_000_000
            expected.append(.reply(requestToken: t(1000 + n), .failure(OpenError(.timeout, phase: .openURL, behind), app: "a", timings: [PhaseTiming(phase: .openURL, nanoseconds: at - sent)], launchState: .hot)))
        }
        expected.append(.terminate(app: "a", pid: 42, reason: .missedDeadline(.openURL)))
        #expect(actions == expected)
        #expect(!m.isRunning(app: "a", phaseToken: hung), "being killed: a late answer or timer is ignored")
        #expect(m.apps["a"]?.pendingOpens == 35, "16 waiting for the exit, 19 queued")
        #expect(m.waitingRequests == (21..<40).map { t(1000 + $0) })
        let relaunch = m.exited(app: "a", status: .signaled(9), now: at + 1)
        #expect(relaunch == [.spawn(app: "a"), .armDeadline(app: "a", phase: .launch, token: t(5 + 16 + 5), after: .seconds(10))])
    }
}
