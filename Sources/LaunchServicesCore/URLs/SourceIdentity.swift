/// The `sourceApplication` of callers that are not registered apps: names every part of the
/// project agrees on (lsopen prints them, the daemon assigns them, PROTOCOL.md documents them).
public enum SourceIdentity {
    /// lsopen, lsctl and every other process of the user's.
    public static let user = "org.swift-launch-services.lsopen"
    /// A process an app started and let go, adopted by the daemon: it descends from an app,
    /// which one is no longer known.
    public static let orphanedApp = "org.swift-launch-services.orphaned-app"
}

/// Durations as milliseconds text, the one way the tools and the log write phase times.
public enum Milliseconds {
    /// `ns` in milliseconds, rounded to `decimals` places (0…6), without a unit.
    public static func text(_ ns: UInt64, decimals: Int = 3) -> String {
        let places = min(max(decimals, 0), 6)
        var scale: UInt64 = 1
        for _ in 0..<places { scale *= 10 }
        let unit = 1_000_000 / scale
        let rounded = (ns + unit / 2) / unit
        guard places > 0 else { return "\(rounded)" }
        let fraction = String(rounded % scale)
        return "\(rounded / scale)." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// The number `text` writes, as the double reading that text gives: the quotient of two
    /// exact integers rounds to the same nearest double as the decimal it is written as.
    public static func value(_ ns: UInt64, decimals: Int = 3) -> Double {
        let places = min(max(decimals, 0), 6)
        var scale: UInt64 = 1
        for _ in 0..<places { scale *= 10 }
        let unit = 1_000_000 / scale
        return Double((ns + unit / 2) / unit) / Double(scale)
    }
}
