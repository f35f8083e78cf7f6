import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A private session bus (`PrivateSessionBus`, from the testing kit) with session bus
/// clients and activators on a loop of their own, and what each open was answered.
final class DBusFixture: Sendable {
    let bus: PrivateSessionBus
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let logLines = NIOLockedValueBox<[String]>([])

    init(apps: [String: PrivateSessionBus.Mode]) throws {
        bus = try PrivateSessionBus(apps: apps)
    }

    /// An activator on the fixture's loop, on `client` or on a new client with `environment`
    /// as the daemon's (default: the private bus's address).
    func makeActivator(environment: [String: String]? = nil, deadline: Duration = .seconds(60), settings: SessionBusSettings = SessionBusSettings(),
                       client given: SessionBusClient? = nil) async throws -> (SessionBusClient, NIOLoopBound<DBusApplicationActivator>) {
        let client = given ?? SessionBusClient(environment: environment ?? ["DBUS_SESSION_BUS_ADDRESS": bus.address], settings: settings)
        let loop = group.next()
        let logLines = self.logLines
        let activator = try await loop.submit {
            NIOLoopBound(DBusApplicationActivator(loop: loop, bus: client, deadline: deadline,
                                                  logger: Logger(label: "dbus-tests") { _ in RecordingLogHandler(lines: logLines, logLevel: .debug) }),
                         eventLoop: loop)
        }.get()
        return (client, activator)
    }

    /// Every answer one `open` got, and how many came off the loop.
    final class Answers: Sendable {
        let outcomes = NIOLockedValueBox<[DesktopLaunchOutcome]>([])
        let offLoop = NIOLockedValueBox(0)
        var count: Int { outcomes.withLockedValue { $0.count } }
        var first: DesktopLaunchOutcome? { outcomes.withLockedValue { $0.first } }
    }

    /// Starts an open on `activator`; its answers are collected.
    func start(_ activator: NIOLoopBound<DBusApplicationActivator>, busName: String, urls: [String],
               platformData: DBusPlatformData = DBusPlatformData()) -> Answers {
        let answers = Answers()
        let loop = activator.eventLoop
        loop.execute {
            activator.value.open(busName: busName, urls: urls, platformData: platformData) { outcome in
                if !loop.inEventLoop { answers.offLoop.withLockedValue { $0 += 1 } }
                answers.outcomes.withLockedValue { $0.append(outcome) }
            }
        }
        return answers
    }

    /// Opens and waits (at most 90 s) for the answer.
    func open(_ activator: NIOLoopBound<DBusApplicationActivator>, busName: String, urls: [String],
              platformData: DBusPlatformData = DBusPlatformData()) throws -> DesktopLaunchOutcome {
        try wait(for: start(activator, busName: busName, urls: urls, platformData: platformData))
    }

    func wait(for answers: Answers) throws -> DesktopLaunchOutcome {
        try waitFor("the open's answer", within: 90) { answers.count > 0 }
        guard let outcome = answers.first else { throw ProcessError("no answer") }
        return outcome
    }

    /// Stops `client`: every call still owed an answer is answered, its thread ends (waited
    /// for, at most 30 s).
    func shutdown(_ client: SessionBusClient) throws {
        let loop = group.next()
        let stopped = try loop.submit { client.shutdown(on: loop) }.wait()
        let done = NIOLockedValueBox(false)
        stopped.whenComplete { _ in done.withLockedValue { $0 = true } }
        try waitFor("the session bus thread to end", within: 30) { done.withLockedValue { $0 } }
    }

    /// Stops the apps and the bus by PID, the loop, and removes the folder.
    func remove() {
        bus.remove()
        try? group.syncShutdownGracefully()
    }
}
