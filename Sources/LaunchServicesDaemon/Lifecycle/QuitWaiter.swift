import LaunchServicesCore
import LaunchServicesProtocol

/// A caller of `lsctl quit`, waiting for the app to exit.
struct QuitWaiter {
    let connection: ClientConnection
    let id: UInt32
    let pid: Int32
    /// When the quit was asked (the loop's clock).
    let started: UInt64
}

extension ActionExecutor {
    /// The machine says the quit of `app` ended (`quitEnded`): tell whoever asked how.
    func answerQuitWaiters(_ app: String, step: LaunchStateMachine.QuitStep, status: ExitStatus) {
        guard let waiters = quitWaiters.removeValue(forKey: app) else { return }
        let ended = switch step {
        case .killed: "killed"
        case .asked: "terminated"
        case .closed: "exited"
        }
        let now = loop.now.uptimeNanoseconds
        for waiter in waiters {
            let report = QuitReport(quit: app, pid: waiter.pid, ended: ended, status: "\(status)",
                                    seconds: Double(now >= waiter.started ? now - waiter.started : 0) / 1e9)
            connections.send(Envelope(id: waiter.id, .queryResult(json: JSONDocument.encode(report))), to: waiter.connection)
        }
    }
}
