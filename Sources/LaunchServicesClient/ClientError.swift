import LaunchServicesCore
import LaunchServicesProtocol

/// Why a request to the daemon could not be made or answered.
public enum ClientError: Error, CustomStringConvertible, Sendable {
    /// Nothing accepted a connection at the socket path.
    case daemonUnreachable(path: String, reason: String)
    /// No answer before the deadline.
    case timedOut(waitingFor: String, after: Duration)
    /// The connection closed before the answer arrived.
    case connectionClosed(waitingFor: String)
    /// The bytes received were not a valid message.
    case protocolViolation(String)
    /// The daemon refused the request with a named error.
    case refused(OpenError)
    /// A system call failed.
    case system(call: String, errno: Int32)

    public var description: String {
        switch self {
        case .daemonUnreachable(let path, let reason):
            return "cannot reach launchservicesd at \(path): \(reason). Start it (launchservicesd, or systemctl --user start launchservicesd.socket) or set LAUNCHSERVICES_SOCKET to its socket"
        case .timedOut(let what, let after):
            return "no answer from launchservicesd to \(what) within \(after)"
        case .connectionClosed(let what):
            return "launchservicesd closed the connection before answering \(what)"
        case .protocolViolation(let what):
            return "launchservicesd sent a malformed message: \(what)"
        case .refused(let error):
            return error.message
        case .system(let call, let errno):
            return "\(call) failed: \(SystemErrorText.describe(errno))"
        }
    }

    /// The stable error code, as `lsopen --json` prints it.
    public var code: OpenErrorCode {
        switch self {
        case .daemonUnreachable: return .daemonUnreachable
        case .timedOut: return .timeout
        case .connectionClosed, .protocolViolation, .system: return .protocolError
        case .refused(let e): return e.code
        }
    }
}
