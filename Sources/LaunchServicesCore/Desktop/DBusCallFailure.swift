/// Why a method call on the session bus got no successful reply: each case is one thing that
/// went wrong, says what, and what to do. For D-Bus activation (`DesktopLaunchFailure.dbus`)
/// any of them means the app did not get the URLs.
///
/// Text from others (addresses from the environment, the error name and message another
/// process replied with) is quoted with `TerminalText`.
public enum DBusCallFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR` says where the bus is.
    case noSessionBusAddress
    /// `XDG_RUNTIME_DIR` is set but not an absolute path.
    case relativeRuntimeDirectory(String)
    /// Connecting to the bus at `address` (taken from `source`) failed.
    case noSessionBus(address: String, source: String, errno: Int32, reason: String)
    /// The connection to the bus at `address` ended before the reply (the bus stopped or
    /// dropped this connection). The next call connects again.
    case disconnected(address: String)
    /// No reply within the call's deadline (`milliseconds`).
    case noReply(destination: String, member: String, milliseconds: Int64)
    /// The callee (or the bus, on its behalf: an app that cannot be activated is
    /// `org.freedesktop.DBus.Error.ServiceUnknown` or `….Spawn.*`) replied with an error.
    case errorReply(name: String, message: String)
    /// `limit` calls already wait for the bus.
    case tooManyCalls(limit: Int)
    /// The call cannot be sent as asked: an invalid name or path, or an argument D-Bus
    /// cannot carry (a string with a NUL byte).
    case invalidCall(reason: String)
    /// The daemon stopped before the reply.
    case stopping

    public var description: String {
        switch self {
        case .noSessionBusAddress:
            return "no session bus: neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set; start the daemon in the user's session (or set DBUS_SESSION_BUS_ADDRESS)"
        case .relativeRuntimeDirectory(let directory):
            return "no session bus: XDG_RUNTIME_DIR=\(TerminalText.quoted(directory)) is not an absolute path; set DBUS_SESSION_BUS_ADDRESS, or XDG_RUNTIME_DIR to the user's runtime folder"
        case .noSessionBus(let address, let source, let errno, let reason):
            return "no session bus at \(TerminalText.quoted(address)) (from \(source)): \(reason) (errno \(errno)); is a D-Bus session bus running for this user?"
        case .disconnected(let address):
            return "the session bus at \(TerminalText.quoted(address)) closed the connection before the reply; the next call connects again"
        case .noReply(let destination, let member, let milliseconds):
            return "\(TerminalText.quoted(destination)) did not answer \(member) within \(milliseconds) ms"
        case .errorReply(let name, let message):
            return "the reply was the error \(TerminalText.quoted(name)): \(TerminalText.quoted(message))"
        case .tooManyCalls(let limit):
            return "\(limit) calls already wait for the session bus; try again when some are answered"
        case .invalidCall(let reason):
            return "the call cannot be sent: \(reason)"
        case .stopping:
            return "the daemon stopped before the reply"
        }
    }
}
