#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon listens: `$LAUNCHSERVICES_SOCKET`, else
/// `$XDG_RUNTIME_DIR/launchservices/socket`, else `/tmp/launchservices-UID/socket`.
/// Every tool, the app runtime and the daemon use this one function.
public enum SocketPath {
    public static let environmentVariable = "LAUNCHSERVICES_SOCKET"

    public static func resolve(environment: [String: String]? = nil) -> String {
        func value(_ name: String) -> String? {
            if let environment { return environment[name] }
            guard let p = getenv(name) else { return nil }
            return String(cString: p)
        }
        if let explicit = value(environmentVariable), !explicit.isEmpty { return explicit }
        if let runtime = value("XDG_RUNTIME_DIR"), !runtime.isEmpty { return runtime + "/launchservices/socket" }
        return "/tmp/launchservices-\(getuid())/socket"
    }
}
