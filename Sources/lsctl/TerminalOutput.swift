import LaunchServicesClient
import LaunchServicesCore

// lsctl prints what the daemon holds: bundle paths, URLs, pasteboard names, apps' messages.
// A file name in an apps folder or a pasteboard name may hold characters a terminal acts on
// (a newline, ESC, the one-byte CSI), so every text line lsctl prints goes through
// `printEscaped`, and every JSON document through `printJSON`; a plain `print` in lsctl is a
// bug (CommandLineConventionTests holds the sources to that). Two outputs are bytes, not
// text: `pasteboard paste` writes the item exactly as copied (as `cat` writes a file), and
// `logs` an app's output exactly when stdout is not a terminal (on one, each line escaped).

/// Prints one line with its control characters escaped (`TerminalText`).
func printEscaped(_ line: String) {
    print(TerminalText.escapingControls(line))
}

/// Prints a JSON document (a daemon's answer, or lsctl's own) for a script or a terminal:
/// `JSONText.escapingTerminalControls` writes the control characters JSON lets through raw as
/// `\u` escapes, so the document means exactly what it did.
func printJSON(_ document: String) {
    print(JSONText.escapingTerminalControls(document))
}

/// A refusal or failure on stderr, `lsctl: ` first, control characters escaped.
func complain(_ message: String) {
    StandardStreams.error("lsctl: " + TerminalText.escapingControls(message) + "\n")
}
