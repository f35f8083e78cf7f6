import LaunchServicesCore
import LaunchServicesSystemd

/// Where the user's session bus is, found as libdbus, GLib and sd-bus find it:
/// `DBUS_SESSION_BUS_ADDRESS` when set (and not empty), else the socket `bus` in
/// `XDG_RUNTIME_DIR` (where systemd's `dbus.socket` and dbus-broker put it). Read from the
/// environment the daemon was given, once; `source` names which, so a failure says what was
/// tried and where it came from.
package struct SessionBusAddress: Sendable, Equatable {
    /// A D-Bus address (`unix:path=/run/user/1000/bus`).
    package var address: String
    /// `DBUS_SESSION_BUS_ADDRESS`, or `XDG_RUNTIME_DIR` (its `bus` socket).
    package var source: String

    package init(address: String, source: String) {
        self.address = address
        self.source = source
    }

    package static func resolve(environment: [String: String]) -> Result<SessionBusAddress, DBusCallFailure> {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return .success(SessionBusAddress(address: address, source: "DBUS_SESSION_BUS_ADDRESS"))
        }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return .failure(.noSessionBusAddress) }
        guard runtime.hasPrefix("/") else { return .failure(.relativeRuntimeDirectory(runtime)) }
        let socket = runtime.hasSuffix("/") ? runtime + "bus" : runtime + "/bus"
        return .success(SessionBusAddress(address: TransientScope.address(socketPath: socket), source: "XDG_RUNTIME_DIR"))
    }
}
