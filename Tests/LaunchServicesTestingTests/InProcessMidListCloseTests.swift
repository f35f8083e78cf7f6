import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// A connection that closes while the executor is half-way through an action list (the
/// table disconnects a caller whose replies overflowed, and NIO reports the close at once):
/// what the daemon does about the close waits until the list is done, so the rest of the
/// list still finds the opens it answers.
extension InProcessLifecycleTests {
    @Test("a deadline kill answers three opens of a caller whose unread replies are over the limit: the first answer disconnects it, and all three are still recorded as timeout, none as withdrawn")
    func closeInTheMiddleOfAList() throws {
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.deadlines.openURL = .seconds(2)
        configuration.connectionLimits.maximumQueuedOutputBytes = 4096
        let daemon = InProcessDaemon(configuration: configuration, apps: [Self.notes])
        let observer = daemon.connect()
        _ = try #require(observer.open("notes://warm-up"))

        // A caller that stops reading: its answers pile up until the next one written would
        // find more than the limit waiting.
        let caller = daemon.connect()
        caller.stopReading()
        var answered = 0
        while caller.unreadBytes <= 4096, answered < 1000 {
            caller.send(.open(url: "notes://read-never-\(answered)", annotation: nil))
            daemon.settle()
            answered += 1
        }
        #expect(caller.unreadBytes > 4096)
        #expect(caller.isConnected, "nothing more was written to it yet")

        // Three opens the app hangs on, one at a time (each delivery flushed to the app).
        daemon.behave(Self.notesID) { $0.open = .hang }
        for n in 1...3 {
            caller.send(.open(url: "notes://\(n)", annotation: nil))
            daemon.settle()
        }
        #expect(daemon.opensInFlight(of: Self.notesID) == 3)

        // The deadline kills notes; one action list answers all three. The first answer
        // disconnects the caller, in the middle of that list.
        daemon.advance(by: .milliseconds(2_100))
        #expect(!caller.isConnected)
        #expect(daemon.log.contains { $0.contains("connections.maximumQueuedOutputBytes") })

        guard case .queryResult(let json) = observer.answer(to: observer.send(AdminQuery.history.message)) else {
            Issue.record("no history")
            return
        }
        let history = try JSONDecoder().decode([HistoryEntry].self, from: Data(json.utf8))
        #expect(history.count == 1 + answered + 3)
        #expect(history.suffix(3).map(\.outcome) == ["timeout", "timeout", "timeout"], "\(history.suffix(3))")
        #expect(!history.contains { $0.outcome == HistoryEntry.withdrawn })
        guard case .queryResult(let statusJSON) = observer.answer(to: observer.send(AdminQuery.status.message)) else {
            Issue.record("no status")
            return
        }
        let status = try JSONDecoder().decode(StatusReport.self, from: Data(statusJSON.utf8))
        #expect(status.opensServed == history.count, "every answer counted is in the history")
    }
}
