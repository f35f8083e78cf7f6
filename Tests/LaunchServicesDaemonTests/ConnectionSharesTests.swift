import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `ConnectionShares`: who may take one more socket connection (per process, per app, per
/// user, and the reserve for processes that hold none), and the `connections` keys that set it.
@Suite("Connection shares: counting and configuration")
struct ConnectionSharesTests {
    static func limits(user: Int, process: Int, app: Int, reserved: Int) -> ConnectionLimits {
        var limits = ConnectionLimits()
        limits.maximumPerUser = user
        limits.maximumPerProcess = process
        limits.maximumPerApp = app
        limits.reservedForFirstConnections = reserved
        return limits
    }

    /// Adds connections of `holder` while they are admitted; returns how many were.
    static func fill(_ shares: inout ConnectionShares, _ holder: ConnectionShares.Holder, upTo count: Int) -> Int {
        var added = 0
        while added < count, shares.refusal(for: holder) == nil {
            shares.add(holder)
            added += 1
        }
        return added
    }

    @Test("defaults: 64 per process, 128 per app, 256 per user with 16 kept for first connections")
    func defaults() {
        let limits = ConnectionLimits()
        #expect(limits.maximumPerProcess == 64)
        #expect(limits.maximumPerApp == 128)
        #expect(limits.maximumPerUser == 256)
        #expect(limits.reservedForFirstConnections == 16)
    }

    @Test("one process gets its share and is then refused by the per-process limit; another process still connects")
    func perProcess() {
        var shares = ConnectionShares(limits: ConnectionLimits())
        let flooder = ConnectionShares.Holder(pid: 100, app: nil)
        #expect(Self.fill(&shares, flooder, upTo: 1000) == 64)
        #expect(shares.refusal(for: flooder) == .process(holds: 64))
        #expect(shares.refusal(for: .init(pid: 101, app: nil)) == nil)
        #expect(shares.refusal(for: flooder)?.limit == .connectionsPerProcess)
    }

    @Test("an app's processes count together; the user and other apps still connect")
    func perApp() {
        var shares = ConnectionShares(limits: ConnectionLimits())
        var added = 0
        for pid: Int32 in 200..<210 { added += Self.fill(&shares, .init(pid: pid, app: "com.example.flood"), upTo: 64) }
        #expect(added == 128)
        #expect(shares.refusal(for: .init(pid: 300, app: "com.example.flood")) == .app(holds: 128))
        #expect(shares.refusal(for: .init(pid: 300, app: nil)) == nil)
        #expect(shares.refusal(for: .init(pid: 301, app: "com.example.other")) == nil)
    }

    @Test("the last connections are kept for processes that hold none; then the user's limit refuses everyone")
    func reserveThenUser() {
        var shares = ConnectionShares(limits: Self.limits(user: 10, process: 4, app: 10, reserved: 2))
        // Two processes holding 4 each: 8 of 10, the reserve reached.
        #expect(Self.fill(&shares, .init(pid: 1, app: nil), upTo: 4) == 4)
        #expect(Self.fill(&shares, .init(pid: 2, app: nil), upTo: 3) == 3)
        #expect(Self.fill(&shares, .init(pid: 3, app: nil), upTo: 1) == 1)
        #expect(shares.total == 8)
        #expect(shares.refusal(for: .init(pid: 2, app: nil)) == .reserve(userHolds: 8, processHolds: 3))
        #expect(shares.refusal(for: .init(pid: 2, app: nil))?.limit == .connectionsReserved)
        // Processes holding none take the reserve, one each.
        shares.add(.init(pid: 4, app: nil))
        #expect(shares.refusal(for: .init(pid: 4, app: nil)) == .reserve(userHolds: 9, processHolds: 1))
        shares.add(.init(pid: 5, app: nil))
        #expect(shares.refusal(for: .init(pid: 6, app: nil)) == .user(holds: 10))
        // One leaves: a new process is admitted again, and the counts forget the emptied holder.
        shares.remove(.init(pid: 5, app: nil))
        #expect(shares.held(byProcess: 5) == 0)
        #expect(shares.refusal(for: .init(pid: 6, app: nil)) == nil)
    }

    @Test("every refusal names its configuration key in the peer's message")
    func messagesNameTheKey() {
        let limits = ConnectionLimits()
        let holder = ConnectionShares.Holder(pid: 42, app: "com.example.flood")
        let cases: [(ConnectionShares.Refusal, String)] = [
            (.process(holds: 64), "connections.maximumPerProcess"),
            (.app(holds: 128), "connections.maximumPerApp"),
            (.user(holds: 256), "connections.maximumPerUser"),
            (.reserve(userHolds: 240, processHolds: 3), "connections.reservedForFirstConnections"),
        ]
        for (refusal, key) in cases {
            #expect(refusal.message(for: holder, uid: 1000, limits: limits).contains(key))
            #expect(refusal.limit.rawValue == key)
        }
        #expect(ConnectionShares.Refusal.app(holds: 128).message(for: holder, uid: 1000, limits: limits).contains("com.example.flood"))
    }

    // MARK: Configuration

    func load(_ json: String) throws -> ConnectionLimits { try ConfigurationText.load(json).connectionLimits }
    func problem(_ json: String) throws -> String? { try ConfigurationText.problem(json) }

    @Test("the shares are read from connections; given alone, maximumPerUser scales them")
    func configuration() throws {
        let given = try load(#"{"connections": {"maximumPerProcess": 8, "maximumPerApp": 16, "reservedForFirstConnections": 4}}"#)
        #expect(given.maximumPerProcess == 8 && given.maximumPerApp == 16 && given.reservedForFirstConnections == 4 && given.maximumPerUser == 256)
        let scaled = try load(#"{"connections": {"maximumPerUser": 32}}"#)
        #expect(scaled.maximumPerProcess == 8 && scaled.maximumPerApp == 16 && scaled.reservedForFirstConnections == 2)
        let one = try load(#"{"connections": {"maximumPerUser": 1}}"#)
        #expect(one.maximumPerProcess == 1 && one.maximumPerApp == 1 && one.reservedForFirstConnections == 0)
        let mixed = try load(#"{"connections": {"maximumPerUser": 32, "maximumPerProcess": 32}}"#)
        #expect(mixed.maximumPerProcess == 32 && mixed.maximumPerApp == 16)
    }

    @Test("the shipped config/launchservicesd.json, copied with only maximumPerUser changed, loads with the shares scaled", arguments: [64, 1024])
    func shippedSampleScales(user: Int) throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let sample = try String(contentsOfFile: repo + "/config/launchservicesd.json", encoding: .utf8)
        #expect(sample.contains(#""maximumPerUser": 256,"#))
        let copied = sample.replacingOccurrences(of: #""maximumPerUser": 256,"#, with: #""maximumPerUser": \#(user),"#)
        let limits = try load(copied)
        #expect(limits.maximumPerUser == user)
        #expect(limits.maximumPerProcess == user / 4)
        #expect(limits.maximumPerApp == user / 2)
        #expect(limits.reservedForFirstConnections == user / 16)
    }

    @Test("out-of-range shares are refused, naming the key and the range", arguments: [
        (#"{"connections": {"maximumPerProcess": 0}}"#, "connections.maximumPerProcess is 0; give 1 to 256"),
        (#"{"connections": {"maximumPerProcess": 257}}"#, "connections.maximumPerProcess is 257; give 1 to 256"),
        (#"{"connections": {"maximumPerUser": 10, "maximumPerApp": 11}}"#, "connections.maximumPerApp is 11; give 1 to 10"),
        (#"{"connections": {"reservedForFirstConnections": 256}}"#, "connections.reservedForFirstConnections is 256; give 0 to 255"),
        (#"{"connections": {"reservedForFirstConnections": -1}}"#, "connections.reservedForFirstConnections is -1; give 0 to 255"),
        (#"{"connections": {"maximumPerProcess": 2.5}}"#, "key 'connections.maximumPerProcess' is 2.5; give a whole number"),
        (#"{"connections": {"maximumPerHost": 2}}"#, "has unknown key 'connections.maximumPerHost'; known: firstMessageSeconds, maximumCallbackAddresses, maximumPendingRequests, maximumPerApp, maximumPerProcess, maximumPerUser, maximumQueuedOutputBytes, reservedForFirstConnections"),
    ])
    func outOfRange(json: String, expected: String) throws {
        #expect(try problem(json) == expected)
    }
}
