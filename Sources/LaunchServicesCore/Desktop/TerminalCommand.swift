/// How a `Terminal=true` entry is run: inside the user's terminal emulator, as
/// `TERMINAL -e PROGRAM ARGS…` (one process per command, like the command itself).
///
/// Which terminal: `$TERMINAL` when it is set and not empty (the user's choice: nothing else
/// is tried, so a mistyped value is reported rather than silently replaced), else Debian's
/// `x-terminal-emulator` alternative. The value is a program name or path, never split into
/// words. `-e` followed by the command as separate arguments is what `x-terminal-emulator`
/// promises (Debian policy 11.8.3), and the convention xterm set.
/// Finding the program on PATH is the caller's (it is I/O).
public enum TerminalCommand {
    public static let fallback = "x-terminal-emulator"

    /// The terminal program to look for.
    public static func program(terminalVariable: String?) -> String {
        if let terminal = terminalVariable, !terminal.isEmpty { return terminal }
        return fallback
    }

    /// What was tried, for `DesktopLaunchFailure.noTerminal`.
    public static func notFound(terminalVariable: String?) -> DesktopLaunchFailure {
        if let terminal = terminalVariable, !terminal.isEmpty {
            return .noTerminal(tried: "TERMINAL=\(TerminalText.quoted(terminal)) is not found (on PATH, or as a path); set TERMINAL to your terminal emulator's command")
        }
        return .noTerminal(tried: "TERMINAL is not set and \(fallback) is not on PATH; set TERMINAL to your terminal emulator's command")
    }

    /// `argv` run by `terminal`.
    public static func wrap(_ argv: [String], in terminal: String) -> [String] {
        [terminal, "-e"] + argv
    }
}
