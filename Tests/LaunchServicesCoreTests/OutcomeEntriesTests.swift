import Foundation
import LaunchServicesCore
import Testing

/// The D-Bus `Open` answers with `OutcomeJSON.entries`, `lsopen --json` prints
/// `OutcomeJSON.render`: on generated outcomes, reading the printed object gives exactly the
/// entries (keys, order, value types, numbers to the bit), so the two answers cannot drift.
@Suite("OutcomeJSON.entries equals reading OutcomeJSON.render")
struct OutcomeEntriesTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["LS_OUTCOME_ENTRIES_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)

    @Test("2,000 generated outcomes, native and desktop, opened and failed")
    func generated() throws {
        print("OutcomeEntriesTests seed \(Self.seed) (LS_OUTCOME_ENTRIES_SEED replays)")
        var random = SeededGenerator(seed: Self.seed)
        for n in 0..<2000 {
            let (outcome, url, from) = Self.outcome(&random)
            let parsed = try PropertyListJSON.parse(OutcomeJSON.render(outcome, url: url, fellBackFrom: from), maximumBytes: 1 << 20, omittingNulls: true)
            let entries = OutcomeJSON.entries(outcome, url: url, fellBackFrom: from)
            #expect(parsed == .dictionary(entries), "case \(n) of seed \(Self.seed): \(outcome)")
        }
    }

    @Test("milliseconds as values equal their text read back, at every rounding boundary tried")
    func milliseconds() {
        var random = SeededGenerator(seed: Self.seed ^ 0x5A5A)
        let fixed: [UInt64] = [0, 1, 499, 500, 501, 999, 1_000, 1_499, 1_500, 123_456_789, 999_999_999_999, UInt64(1) << 52]
        let values = fixed + (0..<5000).map { _ in UInt64.random(in: 0...(UInt64(1) << 50), using: &random) }
        for ns in values {
            #expect(Milliseconds.value(ns) == Double(Milliseconds.text(ns))!, "\(ns) ns")
        }
    }

    static func outcome(_ random: inout SeededGenerator) -> (OpenOutcome, String, String?) {
        func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
        func text() -> String {
            let pieces = ["a", "xyz:", "é", "\"", "\\", "\u{1}", "\n", "\t", "/", " ", "😀", "\u{7f}", "{}", "[1,2]", "null"]
            return (0..<Int.random(in: 0...6, using: &random)).map { _ in pick(pieces) }.joined()
        }
        func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &random) ? make() : nil }
        // Each phase at most once, as the daemon reports them.
        let timings = LaunchPhase.allCases.shuffled(using: &random).prefix(Int.random(in: 0...4, using: &random)).map {
            PhaseTiming(phase: $0, nanoseconds: UInt64.random(in: 0...5_000_000_000, using: &random))
        }
        let error = maybe { OpenError(pick(OpenErrorCode.allCases), phase: maybe { pick(LaunchPhase.allCases) }, text()) }
        let desktop = maybe {
            DesktopLaunchOutcome(kind: pick(DesktopLaunchOutcome.Kind.allCases), pid: maybe { Int32.random(in: 1...Int32.max, using: &random) },
                                 exitStatus: maybe { Bool.random(using: &random) ? .exited(Int32.random(in: 0...255, using: &random)) : .signaled(Int32.random(in: 1...64, using: &random)) },
                                 stderrTail: (0..<Int.random(in: 0...3, using: &random)).map { _ in text() })
        }
        let outcome = OpenOutcome(app: maybe(text), error: error, launched: Bool.random(using: &random), method: maybe { pick([DeliveryMethod.open, .handleOpen, .none]) },
                                  timings: timings, launchState: maybe { pick(LaunchState.allCases) }, totalNanoseconds: maybe { UInt64.random(in: 0...10_000_000_000, using: &random) },
                                  handlerKind: maybe { pick(HandlerKind.allCases) }, desktop: desktop)
        return (outcome, text(), maybe(text))
    }
}
