/// The machine's transitions shared by its events: starting an open (cold or warm, in the
/// front or the background), entering a phase with its deadline, taking the front, the
/// background grace, the live-app limit, and moving to the next queued open.
extension LaunchStateMachine {

    /// The answer to the transaction's caller, stamped with where the open found the app.
    static func reply(_ tx: Transaction, _ outcome: OpenOutcome) -> Action {
        var stamped = outcome
        stamped.launchState = tx.launchState
        return .reply(requestToken: tx.request.token, stamped)
    }

    mutating func begin(_ request: OpenRequest, app: String, now: UInt64, into actions: inout [Action]) {
        // The record is changed where it is (`apps.values[slot]`), not copied out and back:
        // a copy shares its arrays with the stored one, so the first change to them would
        // copy them, and writing it back would hash the identifier again.
        let slot = slot(creating: app)
        apps.values[slot].lastUsed = now
        apps.values[slot].stopGrace()
        let state = apps.values[slot].state
        let launchState: LaunchState = switch state {
        case .notRunning: .cold
        case .suspended: .resumed
        case .active where frontmost == app: .hot
        default: .warm
        }
        if state == .suspended, let pid = apps.values[slot].pid {
            actions.append(.resume(app: app, pid: pid))
            // Running again; a background open leaves it in the background.
            apps.values[slot].lifecycle = .background(pid: pid, grace: nil)
        }
        if state == .notRunning {
            var record = apps.values[slot]
            var tx = Transaction(request: request, phase: .launch, phaseToken: tokens.take(), phaseStarted: now, launchState: launchState)
            // Written at spawn, both launch methods take their tokens now, right after the
            // launch's: the ids on the connection still increase.
            if prewritesLaunchMethods {
                tx.prelude = LaunchPrelude(willFinishLaunching: tokens.take(), didFinishLaunching: tokens.take(), request: request)
            }
            record.lifecycle = .launching(pid: record.pid)
            record.inFlight = [tx]
            apps[app] = record
            actions.append(.spawn(app: app, prelude: tx.prelude))
            actions.append(armDeadline(app, tx))
            enforceLiveLimit(into: &actions)
        } else {
            // The app has one deadline timer, for its oldest open. An open joining others in
            // the window is not timed yet: the app handles frames one at a time, in order, so
            // it starts on this one only once it has answered those before it.
            let oldest = apps.values[slot].inFlight.isEmpty
            if !request.background { bringToFront(app, into: &actions) }
            // Its token is taken once the front has changed (a grace armed there takes one
            // first), the order in which the daemon has always numbered them.
            let tx = Transaction(request: request, phase: .openURL, phaseToken: tokens.take(), phaseStarted: now, launchState: launchState)
            if oldest { actions.append(armDeadline(app, tx)) }
            actions.append(.deliver(app: app, token: tx.phaseToken, request: request))
            apps[app]?.inFlight.append(tx)
        }
    }

    /// Whether another open may be delivered to `record`'s app now, joining those in flight:
    /// it has finished launching, every open in flight is a delivery not being cut short,
    /// the window has room, and nothing stops it (its end, or shutdown).
    func canPipeline(_ record: AppRecord) -> Bool {
        guard !stopping, record.ending == nil, record.inFlight.count < maximumOpensInFlight else { return false }
        switch record.state {
        case .active, .background: break
        default: return false
        }
        return record.inFlight.allSatisfy { $0.phase == .openURL && !$0.terminating }
    }

    /// Moves `tx` to its next phase, under a fresh token (or the one reserved for it), with
    /// the phase's deadline armed.
    mutating func enter(_ phase: LaunchPhase, _ tx: inout Transaction, token: LaunchToken? = nil, app: String, now: UInt64, into actions: inout [Action]) {
        tx.phase = phase
        tx.phaseToken = token ?? tokens.take()
        tx.phaseStarted = now
        actions.append(armDeadline(app, tx))
    }

    /// Enters a launch method's phase. Written at spawn, it is already on the app's
    /// connection and only its clock and deadline start: the app could begin on it only now
    /// (after its hello, or its answer to the method before), the rule deliveries follow too.
    /// Otherwise it is sent now.
    mutating func enterLaunchMethod(_ phase: LaunchPhase, _ tx: inout Transaction, app: String, now: UInt64, into actions: inout [Action]) {
        if let reserved = tx.prelude?.token(for: phase) {
            enter(phase, &tx, token: reserved, app: app, now: now, into: &actions)
        } else {
            enter(phase, &tx, app: app, now: now, into: &actions)
            actions.append(.sendLaunchMethod(app: app, phase: phase, token: tx.phaseToken, options: tx.request))
        }
    }

    /// The deadline of the phase `tx` is in, in full from now.
    func armDeadline(_ app: String, _ tx: Transaction) -> Action {
        .armDeadline(app: app, phase: tx.phase, token: tx.phaseToken, after: deadlines[tx.phase])
    }

    /// Ends the running phase's clock and records its duration.
    func close(_ tx: inout Transaction, now: UInt64) {
        guard !tx.terminating else { return }
        guard !tx.timings.contains(where: { $0.phase == tx.phase }) else { return }
        tx.timings.append(PhaseTiming(phase: tx.phase, nanoseconds: now >= tx.phaseStarted ? now - tx.phaseStarted : 0))
    }

    /// Makes `app` the one frontmost app: the previous one resigns and enters the background.
    /// `notified`: `app`'s own `didBecomeActive` was written already (at its hello).
    mutating func bringToFront(_ app: String, into actions: inout [Action], notified: Bool = false) {
        if let previous = frontmost, previous != app, var other = apps[previous], other.state == .active {
            actions.append(.notify(app: previous, .willResignActive))
            actions.append(.notify(app: previous, .didEnterBackground))
            other.lifecycle = .background(pid: other.pid, grace: nil)
            apps[previous] = other
            armGrace(previous, into: &actions)
        }
        guard let slot = apps.index(forKey: app) else { return }
        let state = apps.values[slot].state
        if state == .background || state == .suspended {
            actions.append(.notify(app: app, .willEnterForeground))
        }
        if state != .active {
            if !notified { actions.append(.notify(app: app, .didBecomeActive)) }
            apps.values[slot].lifecycle = .active(pid: apps.values[slot].pid)
        }
        frontmost = app
    }

    /// Starts the background grace of `app` (when suspension is configured).
    mutating func armGrace(_ app: String, into actions: inout [Action]) {
        guard let after = background.suspendAfter, var record = apps[app] else { return }
        let token = tokens.take()
        if case .background(let pid, _) = record.lifecycle { record.lifecycle = .background(pid: pid, grace: token) }
        apps[app] = record
        actions.append(.armGrace(app: app, token: token, after: after))
    }

    /// While more apps are alive than the limit, terminates the least recently used
    /// suspended one (never an app that is busy, has opens waiting, or is ending already).
    /// An app already killed (evicted, or by its quit) is not counted as alive.
    mutating func enforceLiveLimit(into actions: inout [Action]) {
        var alive = apps.values.filter { $0.state != .notRunning && $0.ending?.isKilled != true }.count
        guard alive > background.maximumLiveApps else { return }
        let candidates = apps.filter { $0.value.state == .suspended && $0.value.ending == nil && $0.value.inFlight.isEmpty && $0.value.queue.isEmpty && $0.value.pid != nil }
            .sorted { ($0.value.lastUsed, $0.key) < ($1.value.lastUsed, $1.key) }
        for (app, record) in candidates where alive > background.maximumLiveApps {
            apps[app]?.ending = .evicted
            actions.append(.terminate(app: app, pid: record.pid!, reason: .evicted))
            alive -= 1
        }
    }

    /// The transaction sent under `token` is over: it leaves the window, the next oldest
    /// open gets the deadline timer, and queued opens fill the room.
    ///
    /// The next oldest gets its whole deadline, from now: the app answers in order, so it
    /// starts on that open only now. A deadline thus measures the app's progress — how long
    /// it spends on one open — and never the time an open spent behind others in the window:
    /// an app that answers each open within the deadline is not declared hung however many
    /// are in flight, and one stuck in an open is still ended a deadline after it began it.
    mutating func finish(app: String, token: LaunchToken, now: UInt64, into actions: inout [Action]) {
        // The record found once and changed where it is (`apps.values[slot]`): every open
        // passes here, and each lookup by name hashes the identifier again.
        guard let slot = apps.index(forKey: app), let index = apps.values[slot].inFlight.firstIndex(where: { $0.phaseToken == token }) else { return }
        apps.values[slot].inFlight.remove(at: index)
        // Not for opens already answered (quit, shutdown): their apps are on their way out.
        if index == 0, let oldest = apps.values[slot].inFlight.first, !oldest.terminating, !oldest.replied {
            actions.append(armDeadline(app, oldest))
        }
        startNext(app: app, now: now, into: &actions)
        // An app left in the background by a background open starts its grace now.
        if let record = apps[app], record.inFlight.isEmpty, record.state == .background, record.graceToken == nil {
            armGrace(app, into: &actions)
        }
    }

    /// Starts queued opens while there is room: one when nothing is in flight (a launch,
    /// or a delivery), then more deliveries while `canPipeline` allows.
    mutating func startNext(app: String, now: UInt64, into actions: inout [Action]) {
        while let record = apps[app], record.inFlight.isEmpty || canPipeline(record), !record.queue.isEmpty {
            guard let next = apps[app]?.queue.popNext() else { return }
            begin(next, app: app, now: now, into: &actions)
        }
    }

    static func format(_ d: Duration) -> String {
        let (s, atto) = d.components
        let ms = s * 1000 + atto / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
    }
}
