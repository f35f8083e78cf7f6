/// The XDG Base Directory folders and the current desktops, from an environment.
///
/// Defaults (the XDG Base Directory spec, as GLib applies them): `XDG_DATA_HOME`
/// `$HOME/.local/share`, `XDG_DATA_DIRS` `/usr/local/share:/usr/share`, `XDG_CONFIG_HOME`
/// `$HOME/.config`, `XDG_CONFIG_DIRS` `/etc/xdg`; a variable that is unset or empty takes its
/// default. A relative path in any of them is ignored, as the spec says (GLib would use it
/// relative to its working folder; a daemon's working folder means nothing to the user).
///
/// `XDG_CURRENT_DESKTOP` is a `:`-separated list; as GLib does, a component that is not
/// letters, digits, `-` and `_` is dropped (it names a file: `gnome-mimeapps.list`), and the
/// rest are lowercased for the file names.
public struct XDGBaseDirectories: Sendable, Equatable {
    public var dataHome: String
    public var dataDirs: [String]
    public var configHome: String
    public var configDirs: [String]
    /// Lowercased, in the order given.
    public var currentDesktops: [String]

    public init(dataHome: String, dataDirs: [String], configHome: String, configDirs: [String], currentDesktops: [String]) {
        self.dataHome = dataHome
        self.dataDirs = dataDirs
        self.configHome = configHome
        self.configDirs = configDirs
        self.currentDesktops = currentDesktops
    }

    /// From `environment`; `home` is the user's home folder (`HOME`, or the password
    /// database's when `HOME` is unset: the caller knows which).
    public init(environment: [String: String], home: String) {
        func single(_ name: String, default fallback: String) -> String {
            guard let value = environment[name], value.hasPrefix("/") else { return fallback }
            return Self.trimmed(value)
        }
        func list(_ name: String, default fallback: [String]) -> [String] {
            guard let value = environment[name], !value.isEmpty else { return fallback }
            return value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                .filter { $0.hasPrefix("/") }.map(Self.trimmed)
        }
        let home = Self.trimmed(home)
        self.init(
            dataHome: single("XDG_DATA_HOME", default: Self.join(home, ".local/share")),
            dataDirs: list("XDG_DATA_DIRS", default: ["/usr/local/share", "/usr/share"]),
            configHome: single("XDG_CONFIG_HOME", default: Self.join(home, ".config")),
            configDirs: list("XDG_CONFIG_DIRS", default: ["/etc/xdg"]),
            currentDesktops: Self.desktops(environment["XDG_CURRENT_DESKTOP"] ?? ""))
    }

    /// The valid components of an `XDG_CURRENT_DESKTOP` value, lowercased.
    public static func desktops(_ value: String) -> [String] {
        value.split(separator: ":", omittingEmptySubsequences: false).compactMap { component in
            let valid = !component.isEmpty && component.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            }
            return valid ? String(String.UnicodeScalarView(component.unicodeScalars.map { scalar in
                scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(scalar.value + 0x20)! : scalar
            })) : nil
        }
    }

    /// `path` without trailing slashes (`/` stays `/`).
    public static func trimmed(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// `folder/name`, with one slash between them.
    public static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
