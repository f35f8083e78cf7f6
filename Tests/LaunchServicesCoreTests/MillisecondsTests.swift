import LaunchServicesCore
import Testing

@Suite("Milliseconds text")
struct MillisecondsTests {
    @Test("rounded to the places asked for, zero-padded", arguments: [
        (UInt64(0), 3, "0.000"), (1_234_567, 3, "1.235"), (1_234_567, 2, "1.23"), (5_000, 2, "0.01"),
        (4_999, 2, "0.00"), (2_382_000, 3, "2.382"), (10_000_000, 0, "10"), (999_999_999, 1, "1000.0"),
    ])
    func text(ns: UInt64, decimals: Int, expected: String) {
        #expect(Milliseconds.text(ns, decimals: decimals) == expected)
    }
}
