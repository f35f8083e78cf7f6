import LaunchServicesCore
import NIOCore

/// The phases' deadlines, on one loop timer: the earliest deadline armed is the only one
/// scheduled. Every open arms a deadline (its `openURL` phase) and nearly every one is
/// answered long before it, so a timer of its own per open cost a scheduled task made,
/// queued and cancelled, and a re-arm of the loop's timer, each time; here arming one later
/// than the scheduled time is an entry in a table, and a cancelled deadline is only taken
/// out of it (the timer, when it comes, finds nothing due and moves on to the next).
/// Deadlines are keyed by the phase token they guard, so none replaces or cancels another's.
/// Confined to the loop.
final class DeadlineTimer {
    private struct Armed {
        let app: String
        let at: NIODeadline
    }

    private let loop: EventLoop
    private var armed: [LaunchToken: Armed] = [:]
    /// The one timer, at the earliest deadline armed when it was set (it may have been
    /// cancelled since).
    private var timer: (at: NIODeadline, task: Scheduled<Void>)?
    /// A deadline passed: the token's phase, for `app`.
    var passed: (_ app: String, _ token: LaunchToken) -> Void = { _, _ in }

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Deadlines armed and not yet passed or cancelled.
    var count: Int { armed.count }
    /// When the timer is set to fire, if it is.
    var firesAt: NIODeadline? { timer?.at }

    func arm(_ token: LaunchToken, app: String, after: Duration) {
        let at = loop.now + TimeAmount(after)
        armed[token] = Armed(app: app, at: at)
        if let timer, timer.at <= at { return }
        schedule(at)
    }

    /// The timer stays set even when nothing is left: one caller's opens, one after another,
    /// each cancel the last deadline and arm the next, and cancelling and setting the timer
    /// in between would cost what this saves. It finds nothing due and stops.
    func cancel(_ token: LaunchToken) {
        armed.removeValue(forKey: token)
    }

    private func schedule(_ at: NIODeadline) {
        timer?.task.cancel()
        let task = loop.assumeIsolated().scheduleTask(deadline: at) { [self] in fire() }
        timer = (at, task)
    }

    /// Reports every deadline that has passed, earliest first (then by token), and sets the
    /// timer for the next one.
    private func fire() {
        timer = nil
        let now = loop.now
        let due = armed.filter { $0.value.at <= now }.sorted { ($0.value.at, $0.key) < ($1.value.at, $1.key) }
        for (token, _) in due { armed.removeValue(forKey: token) }
        if let next = armed.values.min(by: { $0.at < $1.at }) { schedule(next.at) }
        // Reported after the table is settled: what a report leads to may arm or cancel.
        for (token, entry) in due { passed(entry.app, token) }
    }
}
