/// Registration times as reports show them: milliseconds since the Unix epoch written as
/// ISO-8601 in UTC with milliseconds, `2026-11-23T20:07:26.123Z`; and the same instant in
/// ISO-8601's basic form, for file names (`basic`).
public enum ClaimTime {
    /// `20261123T200726Z`: to the second, as the names of kept damaged databases carry it;
    /// it sorts by time and has no character a shell or a file name minds.
    public static func basic(_ milliseconds: Int64) -> String {
        let extended = iso8601(milliseconds)
        let seconds = extended.prefix { $0 != "." }
        return String(seconds.filter { $0 != "-" && $0 != ":" }) + "Z"
    }

    /// `20261123T200726Z` (`basic`) back to `2026-11-23T20:07:26Z`: to the second, as the
    /// basic form has no milliseconds; `nil` for anything else.
    public static func extended(basic: some StringProtocol) -> String? {
        let c = Array(basic)
        guard c.count == 16, c[8] == "T", c[15] == "Z", (c[0 ..< 8] + c[9 ..< 15]).allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        func part(_ range: Range<Int>) -> String { String(c[range]) }
        return "\(part(0 ..< 4))-\(part(4 ..< 6))-\(part(6 ..< 8))T\(part(9 ..< 11)):\(part(11 ..< 13)):\(part(13 ..< 15))Z"
    }

    public static func iso8601(_ milliseconds: Int64) -> String {
        let ms = milliseconds.modulo(1000)
        let seconds = (milliseconds - ms) / 1000
        let secondOfDay = seconds.modulo(86_400)
        let days = (seconds - secondOfDay) / 86_400
        // Days since 1970-01-01 to a civil date (proleptic Gregorian).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let text = String(v)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(ms, 3))Z"
    }
}

private extension Int64 {
    /// The remainder with the sign of the divisor (times before 1970 stay ordered).
    func modulo(_ divisor: Int64) -> Int64 { ((self % divisor) + divisor) % divisor }
}
