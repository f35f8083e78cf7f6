import LaunchServicesClient
import LaunchServicesCore

// lsctl prints what the daemon holds: bundle paths, URLs, pasteboard names, apps' messages.
// A file name in an apps folder or a pasteboard name may hold characters a terminal acts on
// (a newline, ESC, the one-byte CSI), so every line lsctl prints has them escaped.

/// Prints one line with its control characters escaped (`TerminalText`). In this module it
/// stands in for `Swift.print`, so no line lsctl prints bypasses it.
func print(_ line: String) {
    Swift.print(TerminalText.escapingControls(line))
}

/// Prints a JSON document (a daemon's answer, or lsctl's own) for a script or a terminal:
/// control characters that JSON lets through raw (DEL, C1, line separators, bidirectional
/// marks) are written as `\u` escapes, which stand for the same characters. They can only be
/// inside strings (the structure is ASCII), so the document means exactly what it did.
func printJSON(_ document: String) {
    guard document.unicodeScalars.contains(where: { $0.value >= 0x7F && TerminalText.isControl($0) }) else {
        return Swift.print(document)
    }
    var out = String.UnicodeScalarView()
    for scalar in document.unicodeScalars {
        if scalar.value >= 0x7F, TerminalText.isControl(scalar) {
            let hex = String(scalar.value, radix: 16)
            out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        } else {
            out.append(scalar)
        }
    }
    Swift.print(String(out))
}

/// A refusal or failure on stderr, `lsctl: ` first, control characters escaped.
func complain(_ message: String) {
    StandardStreams.error("lsctl: " + TerminalText.escapingControls(message) + "\n")
}
