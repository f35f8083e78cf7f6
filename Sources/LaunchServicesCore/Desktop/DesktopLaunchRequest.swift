/// What to start for one desktop entry: the commands its Exec line expanded to
/// (`ExecLine.commands(for:values:)`, one per process) and the entry's values a launch needs.
public struct DesktopLaunchRequest: Sendable, Equatable {
    /// The desktop file ID (`org.example.Mail.desktop`): names the log file, the journal
    /// identifier and the scope.
    public var desktopID: String
    public var commands: [[String]]
    /// `Terminal=true`: each command runs in the user's terminal emulator.
    public var terminal: Bool
    /// `Path=`: the working directory, or `nil` for the daemon's.
    public var workingDirectory: String?
    /// Where the entry was read from; apps get it as `GIO_LAUNCHED_DESKTOP_FILE` (and their
    /// pid as `GIO_LAUNCHED_DESKTOP_FILE_PID`), as GLib's launcher sets them.
    public var entryPath: String?
    /// The entry's `Name`, for the scope's description.
    public var name: String?

    public init(desktopID: String, commands: [[String]], terminal: Bool = false, workingDirectory: String? = nil, entryPath: String? = nil, name: String? = nil) {
        self.desktopID = desktopID
        self.commands = commands
        self.terminal = terminal
        self.workingDirectory = workingDirectory
        self.entryPath = entryPath
        self.name = name
    }

    /// The application ID: the desktop file ID without `.desktop` (systemd's and the
    /// journal's name for the app).
    public var applicationID: String {
        desktopID.hasSuffix(".desktop") ? String(desktopID.dropLast(8)) : desktopID
    }
}
