/// Quitting an app (`lsctl quit`), the way the daemon ends one: its connection closes (the
/// runtime calls `willTerminate` and exits); if it is still alive after the step's grace it
/// gets SIGTERM; after another grace, SIGKILL. Opens waiting for it are answered first.
extension LaunchStateMachine {
    /// How far a quit has got.
    public enum QuitStep: String, Sendable, Equatable {
        /// The connection was closed; the app should exit on its own.
        case closed
        /// It did not: SIGTERM was sent.
        case asked
        /// Nor then: SIGKILL was sent.
        case killed
    }

    /// What the machine answers a caller who asks `app` to quit, before anything is done:
    /// the daemon replies from it and never reads the app's state itself.
    public enum QuitAnswer: Sendable, Equatable {
        /// Not running, or launching but not spawned yet: there is no process to end.
        case notRunning
        /// Running as `pid`: `quit` begins ending it; the caller waits for its exit.
        case quits(pid: Int32)
        /// An earlier quit is already ending `pid`: `quit` changes nothing, and the caller
        /// waits for the same exit.
        case alreadyQuitting(pid: Int32)
        /// The daemon is stopping: every app is ending with it, none is quit on its own.
        case stopping
    }

    /// The answer to a request to quit `app` (see `QuitAnswer`); `quit` acts only on `quits`.
    public func quitAnswer(for app: String) -> QuitAnswer {
        guard let record = apps[app], record.state != .notRunning, let pid = record.pid else { return .notRunning }
        if stopping { return .stopping }
        // An evicted app is being killed, but nobody asked it to quit: the quit is new.
        return record.ending?.quitStep == nil ? .quits(pid: pid) : .alreadyQuitting(pid: pid)
    }

    /// The user asked `app` to quit; `grace` is how long each step waits. Nothing happens
    /// unless `quitAnswer(for:)` is `quits` (not running, already quitting, or stopping).
    /// An evicted app is killed already: the quit only waits for its exit, and ends `killed`.
    public mutating func quit(app: String, grace: Duration, now: UInt64) -> [Action] {
        guard case .quits(let pid) = quitAnswer(for: app), var record = apps[app] else { return [] }
        var actions: [Action] = []
        for token in record.queue.tokens {
            actions.append(.reply(requestToken: token, .failure(OpenError(.unavailable, "\(app) was asked to quit before this open began"), app: app)))
        }
        record.queue = FairOpenQueue()
        for i in record.inFlight.indices where !record.inFlight[i].replied {
            record.inFlight[i].standing = .answered
            let tx = record.inFlight[i]
            actions.append(Self.reply(tx, .failure(OpenError(.unavailable, phase: tx.phase, "\(app) was asked to quit during \(tx.phase.rawValue)"), app: app, launched: tx.cold, timings: tx.timings)))
        }
        if record.ending == .evicted {
            record.ending = .killed
            apps[app] = record
            return actions
        }
        if record.state == .suspended {
            // A stopped process could not notice its connection closing. Resumed, it runs
            // in the background until it exits.
            actions.append(.resume(app: app, pid: pid))
            record.lifecycle = .background(pid: pid, grace: nil)
        }
        record.stopGrace()
        let timer = tokens.take()
        record.ending = .closed(timer: timer)
        apps[app] = record
        actions.append(.closeConnection(app: app))
        actions.append(.armQuitStep(app: app, token: timer, after: grace))
        return actions
    }

    /// A quit step's grace passed and the app is still alive: the next, harder step. A token
    /// that is not the running step's (a step over, an app exited or never quit) does nothing.
    public mutating func quitStepExpired(app: String, token: LaunchToken, grace: Duration) -> [Action] {
        guard var record = apps[app], let ending = record.ending, ending.timer == token, let pid = record.pid else { return [] }
        switch ending {
        case .closed:
            let timer = tokens.take()
            record.ending = .asked(timer: timer)
            apps[app] = record
            return [.askToExit(app: app, pid: pid), .armQuitStep(app: app, token: timer, after: grace)]
        case .asked:
            record.ending = .killed
            apps[app] = record
            return [.terminate(app: app, pid: pid, reason: .quit)]
        case .evicted, .killed:
            // No step runs: `timer` is nil, so no token gets here.
            return []
        }
    }
}
