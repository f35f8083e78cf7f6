#if canImport(Glibc)
import Glibc
#endif

/// `strerror` text for messages, without Foundation.
public enum SystemErrorText {
    public static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
