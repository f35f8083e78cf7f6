/// The daemon's names on the session bus, in one place: the tools (`lsctl export-xdg`), the
/// daemon and the tests derive everything else from `name`.
///
/// `org.swift_launch_services.LaunchServices`, not `org.swift-launch-services.…` as the
/// socket identities are spelled: the D-Bus specification discourages `-` in bus names (and
/// tells a domain with hyphens to use `_`), and the Desktop Entry specification derives the
/// object path and the exported desktop file's name from the bus name, so with `_` all three
/// spell the project the same way.
public enum LaunchServicesBus {
    public static let name = "org.swift_launch_services.LaunchServices"
    /// The path the Desktop Entry specification derives from `name`.
    public static let objectPath = DBusName.objectPath(forWellKnown: name)
    /// The freedesktop interface a `DBusActivatable` application implements.
    public static let applicationInterface = "org.freedesktop.Application"
    /// The project's own interface at `objectPath` (docs/dbus/…xml). Versioned, as D-Bus
    /// interfaces meant to last are: a change a caller could trip on is a new interface
    /// (`…LaunchServices2`) served beside this one, never a change to it.
    public static let interface = name + "1"
    /// The signal of `interface` sent when an app's lifecycle state changes.
    public static let appStateChangedSignal = "AppStateChanged"

    /// The D-Bus error name for one of the product's error codes: `name.Error.` and the code
    /// with its first letter capitalised (`noHandler` → `….Error.NoHandler`), so a D-Bus caller
    /// reads the same code `lsopen --json` prints.
    public static func errorName(_ code: OpenErrorCode) -> String {
        let raw = code.rawValue
        return name + ".Error." + raw.prefix(1).uppercased() + raw.dropFirst()
    }
}
