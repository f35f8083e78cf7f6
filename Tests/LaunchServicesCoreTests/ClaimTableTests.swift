import class Foundation.ProcessInfo
@testable import LaunchServicesCore
import Testing

/// `ClaimTable` against a `Dictionary` doing the same thing, on generated sequences of claims
/// and withdrawals: long enough, and withdrawing enough, that vacant places are reused and
/// dropped many times over.
@Suite("ClaimTable: the same claims as a dictionary, on generated changes")
struct ClaimTableTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["LS_CLAIM_TABLE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)

    static func check(_ table: ClaimTable, _ model: [URLScheme: [String]], _ context: String) {
        #expect(table.count == model.count, "\(context)")
        #expect(table.isEmpty == model.isEmpty, "\(context)")
        #expect(Set(table.keys) == Set(model.keys), "\(context)")
        var seen: [URLScheme: [String]] = [:]
        for (scheme, ids) in table {
            #expect(!ids.isEmpty, "\(context): an entry without claimants")
            #expect(seen.updateValue(ids, forKey: scheme) == nil, "\(context): \(scheme) twice")
        }
        #expect(seen == model, "\(context)")
    }

    @Test("claims, appends, replacements and withdrawals as a dictionary's")
    func differential() throws {
        var random = SeededGenerator(seed: Self.seed)
        for round in 0..<40 {
            var table = ClaimTable()
            var model: [URLScheme: [String]] = [:]
            // Sometimes few schemes (many claimants each), sometimes many (places vacated and
            // dropped in bulk).
            let schemes = try (0..<[3, 50, 400].randomElement(using: &random)!).map { try URLScheme(validating: "s\($0)") }
            let ids = (0..<[2, 20].randomElement(using: &random)!).map { "app\($0)" }
            for step in 0..<3_000 {
                let scheme = schemes.randomElement(using: &random)!
                let id = ids.randomElement(using: &random)!
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3:
                    let at = Int.random(in: 0...(model[scheme]?.count ?? 0), using: &random)
                    table.insert(id, on: scheme) { current in
                        #expect(current == (model[scheme] ?? []), "round \(round) step \(step), seed \(Self.seed)")
                        return at
                    }
                    model[scheme, default: []].insert(id, at: at)
                case 3:
                    table.append(id, to: scheme, alone: [id])
                    model[scheme, default: []].append(id)
                case 4:
                    let replacement = ids.filter { _ in Bool.random(using: &random) }
                    table.set(replacement, for: scheme)
                    model[scheme] = replacement.isEmpty ? nil : replacement
                default:
                    // Withdrawals dominate, so places fall vacant faster than they are reused.
                    table.remove(id, from: scheme)
                    model[scheme]?.removeAll { $0 == id }
                    if model[scheme]?.isEmpty == true { model[scheme] = nil }
                }
                #expect(table[scheme] == model[scheme], "round \(round) step \(step), seed \(Self.seed) (LS_CLAIM_TABLE_SEED)")
                if step % 250 == 0 { Self.check(table, model, "round \(round) step \(step), seed \(Self.seed)") }
            }
            Self.check(table, model, "round \(round), seed \(Self.seed) (LS_CLAIM_TABLE_SEED)")
        }
    }

    @Test("equal whatever order the schemes were claimed in and whatever places are vacant")
    func equality() throws {
        let a = try URLScheme(validating: "a"), b = try URLScheme(validating: "b"), c = try URLScheme(validating: "c")
        var first = ClaimTable()
        first.append("x", to: a, alone: ["x"])
        first.append("y", to: b, alone: ["y"])
        var second = ClaimTable()
        second.append("z", to: c, alone: ["z"])
        second.append("y", to: b, alone: ["y"])
        second.append("x", to: a, alone: ["x"])
        #expect(first != second)
        second.remove("z", from: c)
        #expect(first == second)
        second.insert("w", on: a) { _ in 0 }
        #expect(first != second, "the same schemes with other claimants")
    }
}
