#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The listening socket: bound owner-only in a folder no one else can tamper with, or the
/// one socket activation handed over; accepting pauses when out of file descriptors.
/// It holds no state: the daemon keeps the channel it returns.
enum SocketListener {
    /// Binds (or adopts) the socket and serves it; `pipeline` builds each connection's.
    static func serve(
        path socketPath: String, activated: Int32?, loop: EventLoop, logger: Logger,
        acceptFailed: @escaping @Sendable (Error) -> Void,
        pipeline: @escaping @Sendable (Channel) -> EventLoopFuture<Void>
    ) async throws -> Channel {
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: 256)
            // Out of file descriptors (EMFILE), accept() fails at once and would be retried
            // in a busy loop: pause accepting instead (AcceptPacing), keep serving the
            // connections already open, refuse a caller by name with a reserve descriptor,
            // and say so once a minute at most.
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Taken now, while descriptors are free.
                    _ = DescriptorReserve.shared
                    try channel.pipeline.syncOperations.addHandler(AcceptPacing(pause: .milliseconds(100), reserve: DescriptorReserve(size: 1), failed: acceptFailed))
                }
            }
            .childChannelOption(.writeBufferWaterMark, value: .init(low: ConnectionLimits.stopReadingAboveBytes / 2, high: ConnectionLimits.stopReadingAboveBytes))
            // A peer may shut down its sending side and still read its answers.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer(pipeline)
        if let activated {
            let channel = try await bootstrap.withBoundSocket(activated).get()
            logger.info("serving \(socketPath) (socket-activated)", metadata: ["socket": "\(socketPath)"])
            return channel
        }
        let directory = (socketPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try checkSocketFolder(directory)
        try refuseIfServed(socketPath)
        let channel = try await bootstrap.bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true).get()
        chmod(socketPath, 0o600)
        logger.info("serving \(socketPath)", metadata: ["socket": "\(socketPath)"])
        return channel
    }

    /// Refuses a socket path a live daemon already serves (its socket file would be
    /// replaced). Asked before the registry is read, so a daemon that cannot serve scans
    /// nothing, and again just before binding.
    static func refuseIfServed(_ socketPath: String) throws {
        if FileManager.default.fileExists(atPath: socketPath), (try? SocketProbe.isServed(socketPath)) == true {
            throw DaemonError("another launchservicesd already serves \(socketPath); stop it first or pass --socket")
        }
    }

    /// Refuses a socket folder someone else could tamper with (the `/tmp/launchservices-UID`
    /// fallback could have been made by another user first): it must be a real folder, owned
    /// by this user or root, and not writable by others unless sticky (like `/tmp`).
    static func checkSocketFolder(_ directory: String) throws {
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            throw DaemonError("cannot inspect the socket folder \(directory): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw DaemonError("the socket folder \(directory) is not a folder (a symbolic link?); remove it or pass --socket")
        }
        guard info.st_uid == getuid() || info.st_uid == 0 else {
            throw DaemonError("the socket folder \(directory) belongs to uid \(info.st_uid), not to you (uid \(getuid())); someone else could replace the socket. Remove it or pass --socket")
        }
        guard info.st_mode & 0o022 == 0 || info.st_mode & S_ISVTX != 0 else {
            throw DaemonError("the socket folder \(directory) is writable by others (mode \(String(info.st_mode & 0o7777, radix: 8))); chmod go-w it or pass --socket")
        }
    }
}
