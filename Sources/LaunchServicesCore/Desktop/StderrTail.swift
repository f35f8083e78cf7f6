/// The last bytes a process wrote to stderr, kept within a fixed size, and the last lines in
/// them: what an `exited` outcome shows of why an app failed.
///
/// Only the newest `maximumBytes` are kept; when older bytes were dropped, the first line
/// (possibly cut) is dropped with them, so every line shown is whole. Each line is cut at
/// `maximumLineBytes` and decoded as UTF-8 with broken sequences repaired; nothing is
/// escaped here (a caller shows them through `TerminalText`).
public struct StderrTail: Sendable, Equatable {
    public let maximumBytes: Int
    public let maximumLines: Int
    public let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    private var dropped = false

    public init(maximumBytes: Int = 8192, maximumLines: Int = 10, maximumLineBytes: Int = 512) {
        self.maximumBytes = max(1, maximumBytes)
        self.maximumLines = max(0, maximumLines)
        self.maximumLineBytes = max(1, maximumLineBytes)
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if bytes.count >= maximumBytes {
            buffer = Array(bytes.suffix(maximumBytes))
            dropped = true
            return
        }
        buffer.append(contentsOf: bytes)
        if buffer.count > maximumBytes {
            buffer.removeFirst(buffer.count - maximumBytes)
            dropped = true
        }
    }

    /// The last lines, oldest first; a final line without a newline counts; empty lines are
    /// left out.
    public var lines: [String] {
        var parts = buffer.split(separator: 0x0A, omittingEmptySubsequences: false)
        if dropped, !parts.isEmpty { parts.removeFirst() }
        let kept = parts.lazy.map { $0.last == 0x0D ? $0.dropLast() : $0[...] }.filter { !$0.isEmpty }
        return kept.suffix(maximumLines).map { String(decoding: $0.prefix(maximumLineBytes), as: UTF8.self) }
    }
}
