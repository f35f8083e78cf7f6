#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to stdout/stderr with `write(2)`: safe from any isolation domain
/// (Glibc's `stderr` global is not, under Swift 6), and no Foundation.
public enum StandardStreams {
    public static func error(_ text: String) { write(2, text) }
    public static func output(_ text: String) { write(1, text) }

    static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 { if errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }
}
