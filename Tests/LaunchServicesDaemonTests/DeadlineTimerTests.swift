import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesCore
import NIOCore
import NIOEmbedded
import Testing

/// `DeadlineTimer` keeps one loop timer for every phase deadline: each deadline is reported
/// once, at its time, earliest first, and a cancelled one never.
@Suite("Phase deadlines on one timer")
struct DeadlineTimerTests {
    @Test("a later deadline is only noted; each passes at its own time, earliest first; a cancelled one never passes")
    func examples() {
        let loop = EmbeddedEventLoop()
        let timer = DeadlineTimer(loop: loop)
        var passed: [(String, LaunchToken)] = []
        timer.passed = { passed.append(($0, $1)) }
        timer.arm(3, app: "c", after: .seconds(3))
        timer.arm(1, app: "a", after: .seconds(1))
        timer.arm(2, app: "b", after: .seconds(2))
        timer.arm(4, app: "d", after: .seconds(2))
        timer.cancel(2)
        loop.advanceTime(by: .milliseconds(999))
        #expect(passed.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(passed.map(\.1) == [1])
        loop.advanceTime(by: .seconds(1))
        #expect(passed.map(\.1) == [1, 4] && passed.map(\.0) == ["a", "d"])
        loop.advanceTime(by: .seconds(5))
        #expect(passed.map(\.1) == [1, 4, 3])
        #expect(timer.count == 0)
        timer.arm(5, app: "e", after: .seconds(1))
        timer.cancel(5)
        loop.advanceTime(by: .seconds(10))
        #expect(passed.count == 3)
    }

    @Test("one caller's opens in turn (cancel the last, arm the next) leave the timer where it was; it moves on once, when it comes")
    func openAfterOpen() {
        let loop = EmbeddedEventLoop()
        let timer = DeadlineTimer(loop: loop)
        var passed: [LaunchToken] = []
        timer.passed = { passed.append($1) }
        let start = loop.now
        timer.arm(1, app: "a", after: .seconds(5))
        for n in 2...50 {
            loop.advanceTime(by: .milliseconds(10))
            timer.cancel(LaunchToken(integerLiteral: UInt32(n - 1)))
            timer.arm(LaunchToken(integerLiteral: UInt32(n)), app: "a", after: .seconds(5))
            #expect(timer.firesAt == start + .seconds(5), "open \(n) set the timer again")
        }
        loop.advanceTime(to: start + .seconds(5))
        #expect(passed.isEmpty)
        #expect(timer.firesAt == start + .milliseconds(490) + .seconds(5))
        loop.advanceTime(to: start + .milliseconds(490) + .seconds(5))
        #expect(passed == [50] && timer.firesAt == nil)
    }

    @Test("generated arms, cancels and waits: the deadlines reported equal a model's, in its order")
    func generated() {
        let seed = ProcessInfo.processInfo.environment["LS_DEADLINE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("DeadlineTimerTests seed \(seed) (LS_DEADLINE_SEED replays)")
        var random = SeededGenerator(seed: seed)
        for round in 0..<200 {
            let loop = EmbeddedEventLoop()
            let timer = DeadlineTimer(loop: loop)
            var reported: [LaunchToken] = []
            timer.passed = { _, token in reported.append(token) }
            // The model: every armed deadline with its time, in nanoseconds since the start.
            var model: [LaunchToken: Int64] = [:]
            var expected: [LaunchToken] = []
            var now: Int64 = 0
            var next: UInt32 = 1
            for _ in 0..<60 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    let after = Int64.random(in: 0...5_000, using: &random) * 1_000_000
                    let token = LaunchToken(integerLiteral: next)
                    next += 1
                    timer.arm(token, app: "app\(token)", after: .nanoseconds(after))
                    model[token] = now + after
                case 5..<7:
                    guard let token = model.keys.randomElement(using: &random) else { continue }
                    timer.cancel(token)
                    model[token] = nil
                default:
                    let step = Int64.random(in: 0...3_000, using: &random) * 1_000_000
                    now += step
                    let due = model.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
                    for token in due { model[token] = nil }
                    expected += due
                    loop.advanceTime(by: .nanoseconds(step))
                }
            }
            now += 10_000_000_000
            expected += model.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
            loop.advanceTime(by: .seconds(10))
            #expect(reported == expected, "round \(round) of seed \(seed)")
            #expect(timer.count == 0)
        }
    }
}
