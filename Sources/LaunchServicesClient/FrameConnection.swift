#if canImport(Glibc)
import Glibc
#endif
import CLaunchServicesShim
import LaunchServicesProtocol

/// A blocking, framed connection over a Unix socket, for programs that must start fast:
/// plain POSIX calls and `poll` deadlines, no event loop, no Foundation.
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

    /// Adopts a connected descriptor (the app's fd 3, or a socket from `connect`).
    public init(fd: Int32, maximumFrameLength: Int = Frame.maximumLengthFromDaemon) {
        self.fd = fd
        self.maximumFrameLength = maximumFrameLength
        buffer.reserveCapacity(4096)
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
        return FrameConnection(fd: fd)
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
            var timeoutMs: Int32 = -1
            if let deadline {
                let left = deadline - .now
                if left <= .zero { throw .timedOut(waitingFor: what(), after: .zero) }
                let (s, atto) = left.components
                timeoutMs = Int32(clamping: s * 1000 + atto / 1_000_000_000_000_000 + 1)
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
