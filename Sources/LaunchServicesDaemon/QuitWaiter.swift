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

extension LaunchServicesDaemon {
    /// The app has exited: tell whoever asked it to quit how it ended.
    func answerQuitWaiters(_ app: String, step: LaunchStateMachine.QuitStep?, status: ExitStatus) {
        guard let waiters = quitWaiters.removeValue(forKey: app) else { return }
        let ended = switch step {
        case .killed: "killed"
        case .asked: "terminated"
        default: "exited"
        }
        for waiter in waiters {
            let report = QuitReport(quit: app, pid: waiter.pid, ended: ended, status: "\(status)",
                                    seconds: Double(now >= waiter.started ? now - waiter.started : 0) / 1e9)
            send(Envelope(id: waiter.id, .queryResult(json: JSONDocument.encode(report))), to: waiter.connection)
        }
    }
}
