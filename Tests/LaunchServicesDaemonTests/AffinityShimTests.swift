import CLaunchServicesShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The CPU-affinity calls `lsbench` pins its echo pair with: the mask round-trips, a pin
/// leaves exactly one CPU, and the saved mask puts the thread back. Run on a thread of its
/// own, so a failure can never leave a test runner's thread pinned.
@Suite("CPU affinity shim")
struct AffinityShimTests {
    struct Observed: Sendable {
        var first: Int32 = -1
        var count = 0
        var pinnedFirst: Int32 = -1
        var pinnedSecond: Int32 = -2
        var restoredEqual = false
        var outOfRange: Int32 = 0
        var pinFailed = false
    }

    private static func observe() -> Observed {
        var observed = Observed()
        var mask = [UInt8](repeating: 0, count: Int(LS_CPU_MASK_BYTES))
        guard ls_affinity_get(0, &mask) == 0 else { return observed }
        observed.first = ls_affinity_nth(mask, 0)
        while ls_affinity_nth(mask, Int32(observed.count)) >= 0 { observed.count += 1 }
        observed.outOfRange = ls_affinity_nth(mask, Int32(observed.count))
        let target = ls_affinity_nth(mask, Int32(observed.count - 1))
        guard ls_affinity_pin(0, target) == 0 else {
            observed.pinFailed = true
            return observed
        }
        var pinned = [UInt8](repeating: 0, count: Int(LS_CPU_MASK_BYTES))
        _ = ls_affinity_get(0, &pinned)
        observed.pinnedFirst = ls_affinity_nth(pinned, 0) == target ? target : -3
        observed.pinnedSecond = ls_affinity_nth(pinned, 1)
        _ = ls_affinity_set(0, mask)
        var restored = [UInt8](repeating: 0, count: Int(LS_CPU_MASK_BYTES))
        _ = ls_affinity_get(0, &restored)
        observed.restoredEqual = restored == mask
        return observed
    }

    @Test("get, pin to the last allowed CPU, restore")
    func pinAndRestore() async throws {
        let observed = await withCheckedContinuation { (continuation: CheckedContinuation<Observed, Never>) in
            let thread = Thread { continuation.resume(returning: Self.observe()) }
            thread.start()
        }
        #expect(observed.first >= 0)
        #expect(observed.count >= 1)
        #expect(observed.outOfRange == -1)
        #expect(!observed.pinFailed)
        #expect(observed.pinnedFirst >= 0, "the pinned mask holds the CPU asked for")
        #expect(observed.pinnedSecond == -1, "and only that one")
        #expect(observed.restoredEqual)
    }
}
