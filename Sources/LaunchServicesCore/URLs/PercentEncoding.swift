/// Percent-encoding per RFC 3986 §2.1, done on UTF-8 bytes so no Foundation is needed in
/// app executables (they must start fast).
public enum PercentEncoding {
    /// Characters RFC 3986 calls unreserved: never encoded.
    public static func isUnreserved(_ b: UInt8) -> Bool {
        URLScheme.isAlpha(b) || URLScheme.isDigit(b) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
    }

    /// Decodes `%XX` escapes. With `plusAsSpace`, `+` becomes a space (the
    /// `application/x-www-form-urlencoded` convention some URL services use, e.g.
    /// `data=hello+world`). Malformed escapes are kept literally rather than dropped, so no
    /// data is lost; invalid UTF-8 after decoding is repaired with U+FFFD.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String {
        // Most components hold no escape: then no copy of the bytes is made.
        guard text.utf8.contains(0x25) || (plusAsSpace && text.utf8.contains(0x2B)) else { return String(text) }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x25, i + 2 < bytes.count, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
            } else if b == 0x2B && plusAsSpace {
                out.append(0x20)
                i += 1
            } else {
                out.append(b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String, plusAsSpace: Bool = false) -> String {
        decode(text[...], plusAsSpace: plusAsSpace)
    }

    /// Encodes every byte that is not unreserved: safe for a query component's key or value,
    /// including a whole URL carried as a value (`x-success=scheme%3A%2F%2Fpath%3Fa%3Db`).
    public static func encodeComponent(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        for b in text.utf8 {
            if isUnreserved(b) {
                out.append(b)
            } else {
                out.append(0x25)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }
}
