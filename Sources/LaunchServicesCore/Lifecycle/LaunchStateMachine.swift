/// The app lifecycle as a pure state machine: events in, actions out (the Hummingbird
/// `StateMachine` shape). It owns every app's state, the frontmost app, and each app's
/// queue of opens; the daemon only performs the actions it returns and feeds back what
/// happened. No clock, no I/O: time arrives as `now` (monotonic nanoseconds) on each event.
///
/// Each open is a *transaction*. While an app launches, its launch transaction is the only
/// one; once it has finished launching, up to `maximumOpensInFlight` deliveries may be
/// outstanding at once (a window, like a bus forwarding calls without waiting for each
/// reply), because one open at a time caps an app at one open per daemon→app→daemon round
/// trip. Later opens queue, served in turns by caller (`FairOpenQueue`). Opens for
/// different apps proceed concurrently. Each phase has a deadline; an open's `openURL`
/// deadline runs from when the app can start on it (its delivery, or the answer to the open
/// before it), so it measures the app, not the opens queued in front of it.
public struct LaunchStateMachine: Sendable {
    public let deadlines: PhaseDeadlines
    public let background: BackgroundPolicy
    /// Deliveries one launched app may have outstanding at once (at least 1). The machine's
    /// own default is 1, one open at a time; the daemon passes its configured window.
    public let maximumOpensInFlight: Int
    /// Whether a launch writes both launch methods into the app's connection at spawn (a
    /// `LaunchPrelude`) instead of sending each when its phase begins. The phases, their
    /// order, deadlines, timings and vetoes are the same either way; the daemon's default is
    /// on, the machine's own off (the tests of the sent frames read as the protocol's §5.2).
    public let prewritesLaunchMethods: Bool
    public internal(set) var apps: [String: AppRecord] = [:]
    public internal(set) var frontmost: String?
    /// The daemon is stopping: no open is started, nothing is suspended, a lost connection
    /// is not a reason to kill (the apps are on their way out).
    public private(set) var stopping = false
    /// The tokens of phases, grace timers and quit steps: one counter for all three, so a
    /// token names one thing.
    var tokens = LaunchToken.Counter()

    public init(deadlines: PhaseDeadlines = PhaseDeadlines(), background: BackgroundPolicy = BackgroundPolicy(), maximumOpensInFlight: Int = 1,
                prewritesLaunchMethods: Bool = false) {
        self.deadlines = deadlines
        self.background = background
        self.maximumOpensInFlight = max(1, maximumOpensInFlight)
        self.prewritesLaunchMethods = prewritesLaunchMethods
    }

    public func state(of app: String) -> AppState { apps[app]?.state ?? .notRunning }

    /// Whether the phase begun for `app` under `token` is still running, so its deadline
    /// still matters; the daemon drops the timers of phases that are over.
    public func isRunning(app: String, phaseToken token: LaunchToken) -> Bool {
        apps[app]?.inFlight.contains { $0.isCurrent(token) } ?? false
    }
    public func pid(of app: String) -> Int32? { apps[app]?.pid }

    /// Whether exactly `count` apps are not `notRunning` and each satisfies `check`: what
    /// `running` would say, asked after every event without building it.
    public func running(count: Int, all check: (String, AppRecord) -> Bool) -> Bool {
        var seen = 0
        for (app, record) in apps where record.state != .notRunning {
            seen += 1
            guard seen <= count, check(app, record) else { return false }
        }
        return seen == count
    }

    /// The apps that are not `notRunning`.
    public var running: [(app: String, record: AppRecord)] {
        apps.filter { $0.value.state != .notRunning }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    // MARK: Events

    /// A caller asked to open `request.url`, resolved to `app`.
    public mutating func open(_ request: OpenRequest, app: String, now: UInt64) -> [Action] {
        guard !stopping else {
            return [.reply(requestToken: request.token, .failure(OpenError(.unavailable, "launchservicesd is shutting down"), app: app))]
        }
        // The record is changed in place, never copied out and back: a copy would duplicate
        // the whole queue on every open that waits (O(backlog) per open under load).
        let slot = slot(creating: app)
        if mustWait(apps.values[slot]) {
            apps.values[slot].queue.append(request)
            return []
        }
        apps.values[slot].queue.served(request.caller)
        // Room for a warm open's actions (its deadline and delivery, and the front changing
        // hands): grown from empty, the list was allocated twice per open.
        var actions: [Action] = []
        actions.reserveCapacity(4)
        begin(request, app: app, now: now, into: &actions)
        return actions
    }

    /// Whether an open for `app` must queue: behind its end (a quit or an eviction: the exit
    /// starts the next one cold), behind a launch, behind opens already waiting (their turn comes first), or
    /// behind a full window. (Its own function, so no copy of the record outlives it.)
    /// Where `app`'s record is in `apps`, made (empty) if it has none: the index lets an
    /// event change the record where it is, hashing the identifier once.
    mutating func slot(creating app: String) -> Dictionary<String, AppRecord>.Index {
        if let found = apps.index(forKey: app) { return found }
        apps[app] = AppRecord()
        return apps.index(forKey: app)!
    }

    private func mustWait(_ record: AppRecord) -> Bool {
        record.ending != nil || !record.inFlight.isEmpty && !(record.queue.isEmpty && canPipeline(record))
    }

    /// The spawn succeeded. Nothing to do until the app checks in (the launch deadline is
    /// already armed); it returns actions like every event, so the daemon treats all alike.
    @discardableResult
    public mutating func spawned(app: String, pid: Int32) -> [Action] {
        apps[app]?.lifecycle.pid = pid
        return []
    }

    /// An app started outside the daemon connected and proved who it is: it is running, in
    /// the background, until an open brings it to the front.
    /// Whether a process started by hand may check in as `app` (`attached`): only while the
    /// machine runs no process for it, whatever stage or end it is at.
    public func mayAttach(app: String) -> Bool { state(of: app) == .notRunning }

    public mutating func attached(app: String, pid: Int32, now: UInt64) -> [Action] {
        var record = apps[app, default: AppRecord()]
        guard mayAttach(app: app) else { return [] }
        record.lifecycle = .background(pid: pid, grace: nil)
        record.lastUsed = now
        apps[app] = record
        var actions: [Action] = []
        armGrace(app, into: &actions)
        enforceLiveLimit(into: &actions)
        return actions
    }

    /// The spawn failed outright (no such executable, permission denied, …).
    public mutating func spawnFailed(app: String, reason: String, now: UInt64) -> [Action] {
        guard var record = apps[app], var tx = record.inFlight.first, tx.phase == .launch else { return [] }
        var actions: [Action] = []
        close(&tx, now: now)
        if !tx.replied {
            actions.append(Self.reply(tx, .failure(
                OpenError(.launchFailed, phase: .launch, "could not launch \(app): \(reason)"),
                app: app, launched: tx.cold, timings: tx.timings)))
        }
        record.ended()
        apps[app] = record
        startNext(app: app, now: now, into: &actions)
        return actions
    }

    /// The app connected and said hello: launch proper begins. Its `willFinishLaunching` is
    /// sent now, or was written at spawn (then only its deadline starts).
    ///
    /// `dropsVetoedDelivery`: the app's runtime drops the launch's own delivery after a NO
    /// from either launch method (its hello says so). With the launch methods written at
    /// spawn, the rest of the launch is then written now too: `didBecomeActive` (unless
    /// opened in the background) and the delivery, under a token reserved for it. The app
    /// never waits for the daemon after its hello; the daemon's model is unchanged, the
    /// front still changes and the delivery's phase still begins when the second answer is
    /// read.
    public mutating func checkedIn(app: String, now: UInt64, dropsVetoedDelivery: Bool = false) -> [Action] {
        guard var record = apps[app], var tx = record.inFlight.first, tx.phase == .launch, !tx.terminating, record.state == .launching else { return [] }
        var actions: [Action] = []
        close(&tx, now: now)
        enterLaunchMethod(.willFinishLaunching, &tx, app: app, now: now, into: &actions)
        if dropsVetoedDelivery, tx.prelude != nil, !tx.replied {
            let token = tokens.take()
            tx.prelude?.openURL = token
            if !tx.request.background { actions.append(.notify(app: app, .didBecomeActive)) }
            actions.append(.deliverAtCheckIn(app: app, token: token, request: tx.request))
        }
        record.inFlight[0] = tx
        apps[app] = record
        return actions
    }

    /// The app answered the phase sent under `token`: `accepted` is the delegate's YES/NO.
    public mutating func phaseCompleted(app: String, token: LaunchToken, accepted: Bool, method: DeliveryMethod? = nil, now: UInt64) -> [Action] {
        guard let slot = apps.index(forKey: app), let index = apps.values[slot].inFlight.firstIndex(where: { $0.isCurrent(token) }) else { return [] }
        var tx = apps.values[slot].inFlight[index]
        var actions: [Action] = []
        close(&tx, now: now)
        switch tx.phase {
        case .launch:
            return []
        case .willFinishLaunching, .didFinishLaunching:
            // The launch methods' answers change the record in several places: a copy,
            // written back. An open's answer (every warm open) changes one transaction in
            // place, below.
            var record = apps.values[slot]
            if !accepted && !tx.vetoed {
                let answered = tx.replied
                tx.standing = .vetoed
                if !answered {
                    actions.append(Self.reply(tx, .failure(
                        OpenError(.vetoed, phase: tx.phase, "\(app) refused to open \(tx.request.url): \(tx.phase.rawValue) returned NO"),
                        app: app, launched: tx.cold, timings: tx.timings)))
                }
            }
            if tx.phase == .willFinishLaunching {
                enterLaunchMethod(.didFinishLaunching, &tx, app: app, now: now, into: &actions)
                record.inFlight[index] = tx
                apps[app] = record
                return actions
            }
            // Launched: the app becomes active and frontmost (or, opened in the background,
            // stays there and the frontmost app keeps the front), then receives the URL
            // unless vetoed.
            if tx.request.background { record.lifecycle = .background(pid: record.pid, grace: nil) }
            record.inFlight[index] = tx
            apps[app] = record
            // Written at the hello, `didBecomeActive` and the delivery are on the connection
            // already (the app dropped the delivery after a NO).
            let deliveredAtCheckIn = tx.prelude?.openURL
            if !tx.request.background { bringToFront(app, into: &actions, notified: deliveredAtCheckIn != nil) }
            if tx.vetoed {
                finish(app: app, token: token, now: now, into: &actions)
            } else if let deliveredAtCheckIn {
                enter(.openURL, &tx, token: deliveredAtCheckIn, app: app, now: now, into: &actions)
                apps[app]?.inFlight[index] = tx
                startNext(app: app, now: now, into: &actions)
            } else {
                enter(.openURL, &tx, app: app, now: now, into: &actions)
                actions.append(.deliver(app: app, token: tx.phaseToken, request: tx.request))
                apps[app]?.inFlight[index] = tx
                // Launched: opens that queued behind the launch may now join it in the window.
                startNext(app: app, now: now, into: &actions)
            }
            return actions
        case .openURL:
            if !tx.replied {
                let outcome: OpenOutcome
                // An app that implements no URL method still ran: opening it was the point
                // ("adding the scheme and opening the URL enables cross-application launching").
                if accepted || method == DeliveryMethod.none {
                    outcome = OpenOutcome(app: app, launched: tx.cold, method: method, timings: tx.timings)
                } else {
                    let why = "\(app) did not handle \(tx.request.url): \(method == .handleOpen ? "handleOpen(url:)" : "open(url:sourceApplication:annotation:)") returned NO"
                    outcome = OpenOutcome(app: app, error: OpenError(.notHandled, phase: .openURL, why), launched: tx.cold, method: method, timings: tx.timings)
                }
                actions.append(Self.reply(tx, outcome))
            }
            apps.values[slot].inFlight[index] = tx
            finish(app: app, token: token, now: now, into: &actions)
            return actions
        }
    }

    /// The app's process ended. Whoever waited on it hears how and in which phase.
    public mutating func exited(app: String, status: ExitStatus, now: UInt64) -> [Action] {
        guard var record = apps[app] else { return [] }
        var actions: [Action] = []
        // Asked to quit: whoever asked hears how far the quit had to go, before anything else.
        if let step = record.ending?.quitStep { actions.append(.quitEnded(app: app, step: step, status: status)) }
        // Every open sent to it and not yet answered: each hears the crash, oldest first.
        for var tx in record.inFlight {
            close(&tx, now: now)
            if !tx.replied {
                actions.append(Self.reply(tx, .failure(
                    OpenError(.crashed, phase: tx.phase, "\(app) \(status) during \(tx.phase.rawValue)"),
                    app: app, launched: tx.cold, timings: tx.timings)))
            }
        }
        record.ended()
        apps[app] = record
        if frontmost == app { frontmost = nil }
        startNext(app: app, now: now, into: &actions)
        if apps[app]?.state == .notRunning, apps[app]?.queue.isEmpty == true { apps[app] = nil }
        return actions
    }

    /// The deadline armed under `token` passed. Stale tokens (phase already over) do nothing.
    ///
    /// Every missed deadline terminates the app, `openURL` included: an app hung in `open`
    /// would make every later open wait out the full deadline again (and fill its queue).
    /// Opens sent to it behind the hung one cannot be answered by it any more (an app
    /// answers in order): they hear `timeout` too, at once, saying why. The transactions are
    /// kept until the exit arrives, so queued opens wait for it and then start a fresh process.
    public mutating func deadlinePassed(app: String, token: LaunchToken, now: UInt64) -> [Action] {
        guard var record = apps[app], let index = record.inFlight.firstIndex(where: { $0.isCurrent(token) }) else { return [] }
        var actions: [Action] = []
        let phase = record.inFlight[index].phase
        let limit = Self.format(deadlines[phase])
        for i in record.inFlight.indices {
            var tx = record.inFlight[i]
            close(&tx, now: now)
            if !tx.replied {
                let why = i == index
                    ? "\(app) did not finish \(phase.rawValue) within \(limit); it was terminated"
                    : "\(app) was terminated before it answered this open: it did not finish \(phase.rawValue) of another open within \(limit)"
                actions.append(Self.reply(tx, .failure(OpenError(.timeout, phase: tx.phase, why), app: app, launched: tx.cold, timings: tx.timings)))
            }
            tx.standing = .terminating
            record.inFlight[i] = tx
        }
        apps[app] = record
        if let pid = record.pid {
            actions.append(.terminate(app: app, pid: pid, reason: .missedDeadline(phase)))
        } else {
            // Never spawned (the spawn is still being set up): nothing to wait for.
            record.ended()
            apps[app] = record
            startNext(app: app, now: now, into: &actions)
        }
        return actions
    }

    /// The caller of these requests went away (its connection closed): opens of theirs that
    /// still wait in a queue are dropped, so a departed flooder's backlog does not run and
    /// delay everyone else. An open already in progress finishes; its answer is discarded.
    ///
    /// It returns the actions it causes, like every event: none, since a caller that left
    /// is answered by nobody and a queued open holds back no other (the window and the
    /// launch are unchanged). The daemon performs them all the same, so an event added here
    /// later cannot be dropped silently.
    @discardableResult
    public mutating func withdraw(_ tokens: Set<LaunchToken>) -> [Action] {
        guard !tokens.isEmpty else { return [] }
        for app in apps.keys {
            apps[app]?.queue.remove(tokens: tokens)
        }
        for (app, record) in apps where record.state == .notRunning && record.inFlight.isEmpty && record.queue.isEmpty {
            apps[app] = nil
        }
        return []
    }

    /// The background grace armed under `token` ran out: the app is suspended, unless it
    /// came back to the front (a newer token), is still busy with an open (grace again), or
    /// is ending (a quit stops its grace; this only guards the rule).
    public mutating func graceExpired(app: String, token: LaunchToken, now: UInt64) -> [Action] {
        guard var record = apps[app], record.graceToken == token, record.state == .background, let pid = record.pid, record.ending == nil else { return [] }
        var actions: [Action] = []
        record.stopGrace()
        apps[app] = record
        if !record.inFlight.isEmpty {
            armGrace(app, into: &actions)
            return actions
        }
        record.lifecycle = .suspended(pid: pid)
        apps[app] = record
        actions.append(.suspend(app: app, pid: pid))
        enforceLiveLimit(into: &actions)
        return actions
    }

    /// The app's connection to the daemon closed. Without it the app cannot be driven, so
    /// it is terminated; its exit is reported through `exited`. While stopping, the daemon
    /// closed it: the app exits by itself (and is killed only after the shutdown grace).
    public mutating func disconnected(app: String) -> [Action] {
        // Ending, the app is on its way out already: quitting, the daemon closed the
        // connection itself; evicted, it was killed and its connection closed with it.
        guard !stopping, let record = apps[app], record.ending == nil, let pid = record.pid else { return [] }
        return [.terminate(app: app, pid: pid, reason: .disconnected)]
    }

    /// The daemon stops. Every caller still waiting is answered `unavailable`, naming the
    /// app (an open in progress is cut short: its later answer is ignored); suspended apps
    /// are resumed, since a stopped process could not notice its connection closing and
    /// exit; no grace timer suspends anything any more.
    public mutating func shutdown(now: UInt64) -> [Action] {
        guard !stopping else { return [] }
        stopping = true
        var actions: [Action] = []
        for (token, app) in waitingRequestsByApp {
            actions.append(.reply(requestToken: token, .failure(
                OpenError(.unavailable, "launchservicesd is shutting down; the open in \(app) was not completed"), app: app)))
        }
        for app in apps.keys.sorted() {
            guard var record = apps[app] else { continue }
            record.queue = FairOpenQueue()
            for i in record.inFlight.indices where record.inFlight[i].standing == .awaited { record.inFlight[i].standing = .answered }
            record.stopGrace()
            if record.state == .suspended, let pid = record.pid {
                record.lifecycle = .background(pid: pid, grace: nil)
                actions.append(.resume(app: app, pid: pid))
            }
            apps[app] = record
        }
        return actions
    }

    /// Every caller still waiting with the app its open resolved to, e.g. at shutdown, so
    /// each can be answered naming the app.
    public var waitingRequestsByApp: [(token: LaunchToken, app: String)] {
        apps.sorted { $0.key < $1.key }.flatMap { app, record -> [(token: LaunchToken, app: String)] in
            var tokens = record.queue.tokens
            tokens.insert(contentsOf: record.inFlight.filter { !$0.replied }.map(\.request.token), at: 0)
            return tokens.map { ($0, app) }
        }
    }

    /// Every caller still waiting, e.g. at shutdown, so each can be answered.
    public var waitingRequests: [LaunchToken] {
        apps.values.flatMap { record -> [LaunchToken] in
            var tokens = record.queue.tokens
            tokens.insert(contentsOf: record.inFlight.filter { !$0.replied }.map(\.request.token), at: 0)
            return tokens
        }
    }
}
