import LaunchServicesCore

/// Tells the session bus's `AppStateChanged` of each app whose lifecycle state (as `lsctl
/// running` shows it) or pid changed, by comparing the machine's states after each event
/// with those last reported. The machine is not asked to report it, so the pure core stays
/// as it is.
///
/// The comparison is made only while a report could reach someone (`canReceive`: the bus
/// thread holds a connection; without one it drops every signal it takes). Comparing after
/// every event cost a walk of the running apps per event, twice per open, on a daemon that
/// most often has no session bus at all. While nobody can receive, the last states are
/// forgotten, and taken again before the first event that can be reported: a bus that
/// connects hears of the changes made from then on, as it did when every change was posted
/// and those before its connection were dropped by the thread. Confined to the loop.
final class AppStateReporter {
    /// Whether a report made now can be sent (read before each event).
    let canReceive: () -> Bool
    /// One app's new state and pid (nil when it has no process).
    let changed: (_ app: String, _ state: String, _ pid: Int32?) -> Void
    /// The states as last reported; nil while reports cannot be sent.
    private var lastStates: [String: AppStateSnapshot]?

    init(canReceive: @escaping () -> Bool, changed: @escaping (_ app: String, _ state: String, _ pid: Int32?) -> Void) {
        self.canReceive = canReceive
        self.changed = changed
    }

    /// Before an event: whether its changes are to be reported (`afterEvent`). The states
    /// compared with are taken now when none are kept (reports could not be sent before);
    /// only then is the machine read (an autoclosure: reading the lifecycle's machine
    /// copies it).
    func beforeEvent(_ machine: @autoclosure () -> LaunchStateMachine) -> Bool {
        guard canReceive() else {
            lastStates = nil
            return false
        }
        if lastStates == nil { lastStates = Self.states(of: machine()) }
        return true
    }

    /// After an event `beforeEvent` said to report: every app whose state or pid differs
    /// from the last report; an app no longer running is reported `notRunning` with no pid.
    /// Nothing when the states were dropped meanwhile (the connection ended within the event).
    func afterEvent(_ machine: LaunchStateMachine) {
        guard let last = lastStates else { return }
        // Most events (each open to a running app) change no app's state: found without
        // building anything.
        guard Self.changed(machine, since: last) else { return }
        let states = Self.states(of: machine)
        for (app, now) in states.sorted(by: { $0.key < $1.key }) where last[app] != now { changed(app, now.state, now.pid) }
        for app in last.keys.sorted() where states[app] == nil { changed(app, AppState.notRunning.rawValue, nil) }
        lastStates = states
    }

    private static func changed(_ machine: LaunchStateMachine, since last: [String: AppStateSnapshot]) -> Bool {
        !machine.running(count: last.count) { app, record in
            guard let was = last[app] else { return false }
            return was.pid == record.pid && was.state == record.state.rawValue
        }
    }

    private static func states(of machine: LaunchStateMachine) -> [String: AppStateSnapshot] {
        var states: [String: AppStateSnapshot] = [:]
        for (app, record) in machine.running { states[app] = AppStateSnapshot(state: record.state.rawValue, pid: record.pid) }
        return states
    }
}

/// An app's state and pid as last reported.
private struct AppStateSnapshot: Equatable {
    var state: String
    var pid: Int32?
}
