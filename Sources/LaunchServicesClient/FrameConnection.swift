#if canImport(Glibc)
import Glibc
#endif
import CLaunchServicesShim
import LaunchServicesProtocol

/// A blocking, framed connection over a Unix socket, for programs that must start fast:
/// plain POSIX calls, a blocking read with the kernel's receive timeout as its deadline, no
/// event loop, no Foundation.
///
/// Reads are buffered: everything `read` returns is kept, and `receive` always serves a
/// complete buffered frame before it waits for more bytes (a reader that blocks while a
/// frame is already buffered would hang until its timeout).
public final class FrameConnection {
    public let fd: Int32
    public let maximumFrameLength: Int
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var closed = false
    /// One fixed read buffer per connection: no per-read allocation.
    private let readChunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 8)
    /// Whether reads on the descriptor block (asked once). Then `receive` waits in the read
    /// itself, its deadline the kernel's receive timeout (`SO_RCVTIMEO`): one call per answer
    /// where a `poll` and a `read` took two, on every caller's wake-up.
    private lazy var readsBlock: Bool = (fcntl(fd, F_GETFL) & O_NONBLOCK) == 0
    /// The receive timeout set on the descriptor, in nanoseconds; nil while reads may block
    /// without limit.
    private var receiveTimeout: Int64?

    /// Adopts a connected descriptor (the app's fd 3, or a socket from `connect`).
    public init(fd: Int32, maximumFrameLength: Int = Frame.maximumLengthFromDaemon) {
        self.fd = fd
        self.maximumFrameLength = maximumFrameLength
        buffer.reserveCapacity(4096)
    }

    /// A socket this type made itself, blocking: nothing to ask.
    private convenience init(blockingSocket fd: Int32) {
        self.init(fd: fd)
        readsBlock = true
    }

    deinit {
        close()
        readChunk.deallocate()
    }

    /// Connects to the daemon's socket.
    public static func connect(path: String) throws(ClientError) -> FrameConnection {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < capacity else {
            Glibc.close(fd)
            throw .daemonUnreachable(path: path, reason: "the socket path is \(pathBytes.count) bytes; Unix sockets allow at most \(capacity - 1)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .daemonUnreachable(path: path, reason: SystemErrorText.describe(code))
        }
        // Only a daemon of this user may hear our URLs and answer for apps.
        var peer = ls_ucred()
        if ls_peer_credentials(fd, &peer) == 0, peer.uid != getuid() {
            Glibc.close(fd)
            throw .daemonUnreachable(path: path, reason: "the process serving it (pid \(peer.pid)) runs as uid \(peer.uid), not as you (uid \(getuid())); refusing to talk to it")
        }
        return FrameConnection(blockingSocket: fd)
    }

    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Writes whole frames (already encoded with `Frame.encode`) in as few calls as possible.
    public func send(_ bytes: [UInt8]) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw .connectionClosed(waitingFor: "a write") }
                throw .system(call: "send", errno: errno)
            }
            offset += n
        }
    }

    public func send(_ envelope: Envelope) throws(ClientError) {
        try send(Frame.encode(envelope))
    }

    /// The next message. `deadline` nil waits as long as it takes (an app's idle loop).
    /// `what` is said only in an error, so it is built only then.
    public func receive(waitingFor what: @autoclosure () -> String, deadline: ContinuousClock.Instant?) throws(ClientError) -> Envelope {
        while true {
            if let envelope = try bufferedEnvelope() { return envelope }
            // `poll`'s timeout is worked out here, beside the deadline, though only a
            // descriptor that does not block polls: worked out where it polls, the same code
            // cost every answer 780 instructions more (scripts/bench-counts, client: 15,938
            // against 15,157; the compiler's doing, not the arithmetic's).
            var timeoutMs: Int32 = -1
            var left: Int64?
            if let deadline {
                let (s, atto) = (deadline - .now).components
                left = s &* 1_000_000_000 &+ atto / 1_000_000_000
                if left! <= 0 { throw .timedOut(waitingFor: what(), after: .zero) }
                timeoutMs = Int32(clamping: left! / 1_000_000 + 1)
            }
            if readsBlock, try limitReads(to: left) {
                // A timeout comes back as EAGAIN, and the loop looks at the deadline again.
                try fill(waitingFor: what())
                continue
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, timeoutMs)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(call: "poll", errno: errno)
            }
            if ready == 0 { throw .timedOut(waitingFor: what(), after: .zero) }
            try fill(waitingFor: what())
        }
    }

    /// The next message, waiting as long as it takes (an app's idle loop), reading at once:
    /// on a blocking descriptor (an app's end of the daemon's socket pair) the read itself
    /// waits, one call per frame instead of a poll and a read; a descriptor that turns out
    /// not to block (`EAGAIN`) is polled from then on. Apart from `receive`, whose path with
    /// a deadline is every client's and is left as it is.
    public func receiveWithoutDeadline(waitingFor what: @autoclosure () -> String) throws(ClientError) -> Envelope {
        var blocks = true
        while true {
            if let envelope = try bufferedEnvelope() { return envelope }
            if !blocks {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&pfd, 1, -1) < 0 {
                    if errno == EINTR { continue }
                    throw .system(call: "poll", errno: errno)
                }
            }
            // A deadline's receive timeout, left by `receive`, would end this wait early.
            if blocks, receiveTimeout != nil, try !limitReads(to: nil) {
                blocks = false
                continue
            }
            if consumed > 0 && consumed > buffer.count / 2 {
                buffer.removeFirst(consumed)
                consumed = 0
            }
            let n = Glibc.read(fd, readChunk.baseAddress!, readChunk.count)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    blocks = false
                    continue
                }
                if errno == ECONNRESET { throw .connectionClosed(waitingFor: what()) }
                throw .system(call: "read", errno: errno)
            }
            if n == 0 { throw .connectionClosed(waitingFor: what()) }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: readChunk[..<n]))
        }
    }

    /// A complete frame already buffered, decoded; `nil` when more bytes are needed.
    public func bufferedEnvelope() throws(ClientError) -> Envelope? {
        let available = buffer.count - consumed
        guard available >= Frame.headerLength else { return nil }
        var end = 0
        let step: BufferedStep = buffer.withUnsafeBytes { raw in
            let view = UnsafeRawBufferPointer(rebasing: raw[consumed...])
            do {
                guard let body = try Frame.nextBody(view, limit: maximumFrameLength) else { return .incomplete }
                end = body.upperBound
                return .decoded(try Envelope.decode(UnsafeRawBufferPointer(rebasing: view[body])))
            } catch let error as WireError {
                return .failed(error)
            } catch {
                return .failed(.invalid("frame", "\(error)"))
            }
        }
        switch step {
        case .failed(let error):
            throw .protocolViolation(error.description)
        case .incomplete:
            return nil
        case .decoded(let envelope):
            consumed += end
            if consumed == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                consumed = 0
            }
            return envelope
        }
    }

    /// What one look at the buffer found. A type of its own, not a `Result`: `Result`'s
    /// metadata is built at run time, and checking its `Failure: Error` requirement makes the
    /// runtime scan every protocol conformance in the program the first time, which was the
    /// largest single cost of an app's launch and of `lsopen`'s start. No tuple in it either
    /// (the frame's end is returned beside it): a tuple's metadata is built at run time too.
    private enum BufferedStep {
        case incomplete
        case failed(WireError)
        case decoded(Envelope)
    }

    /// Makes a blocking read end by `left` nanoseconds from now (nil: no limit), setting
    /// `SO_RCVTIMEO` only when the timeout set already would not do: it may end up to 1/64 of
    /// `left` plus 1 ms late, and must not end before half of it. A caller's next request has
    /// a deadline close to the last one's, so one setting serves every request of a
    /// connection. (Plain integers: `Duration`'s arithmetic is 128-bit, and this runs on every
    /// answer.) False when the descriptor takes no receive timeout (not a socket): it is
    /// polled then.
    private func limitReads(to left: Int64?) throws(ClientError) -> Bool {
        if let left, let set = receiveTimeout, set <= left + left / 64 + 1_000_000, set >= left / 2 { return true }
        if left == nil, receiveTimeout == nil { return true }
        var value = timeval()
        if let left {
            value.tv_sec = Int(left / 1_000_000_000)
            // Rounded up, and never 0, which would mean no limit.
            value.tv_usec = Int(left % 1_000_000_000 / 1_000) + 1
            if value.tv_usec >= 1_000_000 {
                value.tv_sec += 1
                value.tv_usec -= 1_000_000
            }
        }
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            if errno == ENOTSOCK || errno == ENOPROTOOPT {
                readsBlock = false
                return false
            }
            throw .system(call: "setsockopt SO_RCVTIMEO", errno: errno)
        }
        receiveTimeout = left
        return true
    }

    private func fill(waitingFor what: @autoclosure () -> String) throws(ClientError) {
        if consumed > 0 && consumed > buffer.count / 2 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        let n = Glibc.read(fd, readChunk.baseAddress!, readChunk.count)
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            if errno == ECONNRESET { throw .connectionClosed(waitingFor: what()) }
            throw .system(call: "read", errno: errno)
        }
        if n == 0 { throw .connectionClosed(waitingFor: what()) }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: readChunk[..<n]))
    }
}
