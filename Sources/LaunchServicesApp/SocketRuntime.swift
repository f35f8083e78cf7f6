#if canImport(Glibc)
import Glibc
#endif
import CLaunchServicesShim
import LaunchServicesClient
import LaunchServicesProtocol

/// The real runtime: `Application.main(delegate:)`, the connection to the daemon
/// (`SocketLink`, the `ApplicationOutbound` that sends frames) and the single-threaded loop
/// that feeds each frame to `Application.handle(_:)` and sends its reply.
extension Application {
    /// Runs the app until the daemon closes its connection. Never returns.
    ///
    /// Launched by the daemon, the app checks in on fd 3. Started by hand, it connects to
    /// the daemon's socket and declares its bundle (the folder its executable was started
    /// from); the daemon checks that this process really runs that bundle's executable.
    public static func main(delegate: some ApplicationDelegate) -> Never {
        let link: SocketLink
        let bundleID: String
        var declaredBundlePath: String?
        if let fdText = getenv(descriptorVariable).map({ String(cString: $0) }), let fd = Int32(fdText) {
            // Launched by the daemon: die with it. The daemon armed SIGKILL before exec;
            // this arms it again because the kernel drops the setting when it execs a
            // set-user-ID or file-capability binary. SIGKILL, not SIGTERM: once the daemon
            // is gone nothing can drive the app, a suspended app would keep SIGTERM pending
            // forever, and the graceful end is the daemon's own shutdown, which closes our
            // connection (`run` then calls willTerminate and exits).
            if let daemon = getenv("LAUNCHSERVICES_DAEMON_PID").flatMap({ Int32(String(cString: $0)) }), ls_die_with_parent(SIGKILL, daemon) != 0 {
                exit(0)
            }
            bundleID = getenv(bundleVariable).map { String(cString: $0) } ?? "unknown"
            link = SocketLink(connection: FrameConnection(fd: fd))
        } else {
            let executable = CommandLine.arguments.first ?? ""
            let bundlePath = executable.contains("/") ? String(executable[..<executable.lastIndex(of: "/")!]) : "."
            let absolute = bundlePath.hasPrefix("/") ? bundlePath : currentDirectory() + "/" + bundlePath
            do {
                link = SocketLink(connection: try FrameConnection.connect(path: SocketPath.resolve()))
            } catch {
                StandardStreams.error("\(executable): \(error)\n")
                exit(69)
            }
            bundleID = "unknown"
            declaredBundlePath = absolute
        }
        let application = Application(bundleIdentifier: bundleID, outbound: link, delegate: delegate)
        application.declaredBundlePath = declaredBundlePath
        // `delegate` is a parameter of this never-returning function: it lives as long as the loop.
        application.run(on: link)
    }

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        let length = buffer.firstIndex(of: 0) ?? 0
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func run(on link: SocketLink) -> Never {
        do {
            try link.connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .app, program: bundleIdentifier, bundlePath: declaredBundlePath,
                                                             dropsVetoedLaunchDelivery: true)))
            while true {
                let envelope = try link.next()
                if let reply = try handle(envelope) {
                    try link.connection.send(Envelope(id: envelope.id, reply))
                }
            }
        } catch {
            if case .connectionClosed = error {
                connectionClosed()
                exit(0)
            }
            StandardStreams.error("\(bundleIdentifier): \(error)\n")
            exit(70)
        }
    }
}

/// The app's connection to the daemon: sends its requests as frames, waits for the replies of
/// synchronous ones, and sets aside whatever else arrives meanwhile for the loop.
@MainActor
final class SocketLink: ApplicationOutbound {
    let connection: FrameConnection
    private var ids = RequestIDs()
    /// Frames that arrived while a synchronous call waited, handled by the run loop next.
    private var deferred = SetAsideFrames(maximum: 256)

    init(connection: FrameConnection) {
        self.connection = connection
    }

    /// The next frame for the loop: one set aside first, else the next from the socket.
    func next() throws(ClientError) -> Envelope {
        if let kept = deferred.removeFirst() { return kept }
        return try connection.receiveWithoutDeadline(waitingFor: "the next event")
    }

    func sendOpen(url: String, annotation: PropertyListValue?, returnTo: String?) throws(ClientError) -> UInt32 {
        let id = ids.take()
        try connection.send(Envelope(id: id, .open(url: url, annotation: annotation, returnTo: returnTo)))
        return id
    }

    func canOpen(url: String) throws(ClientError) -> Bool {
        let reply = try call(.canOpen(url: url), waitingFor: "canOpenURL \(url)", timeout: .seconds(10))
        if case .canOpenResult(let canOpen, _) = reply { return canOpen }
        return false
    }

    func pasteboard(_ request: PasteboardRequest) throws(ClientError) -> PasteboardSnapshot {
        let reply = try call(.pasteboard(request), waitingFor: "pasteboard \(request.operation.rawValue)", timeout: .seconds(10))
        switch reply {
        case .pasteboardResult(let snapshot): return snapshot
        case .failure(let error): throw .refused(error)
        default: throw .protocolViolation("expected pasteboardResult, got \(reply.kindName)")
        }
    }

    /// A synchronous request: waits for its reply, setting aside whatever else arrives.
    private func call(_ message: Message, waitingFor what: String, timeout: Duration) throws(ClientError) -> Message {
        let id = ids.take()
        try connection.send(Envelope(id: id, message))
        let deadline = ContinuousClock.now + timeout
        while true {
            let envelope = try connection.receive(waitingFor: what, deadline: deadline)
            if envelope.id == id, !envelope.message.isDaemonCommand { return envelope.message }
            try deferred.append(envelope)
        }
    }
}
