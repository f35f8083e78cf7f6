import ArgumentParser
import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol

/// `lsctl logs ID [-n N]`: what a launched app wrote to stdout and stderr. The daemon's
/// `status` says where that goes (`appLogs`): into the journal, whose command this prints,
/// or into `ID.log` (and the rotated `ID.log.1`) in a folder, which this prints: exactly,
/// for a pipe or a file; on a terminal with each line's control characters escaped, since
/// an app's output may hold sequences a terminal acts on (a new window title, a cleared
/// screen, a carriage return over a line) and lsctl shows text, never lets it act.
struct Logs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what a launched app wrote to stdout and stderr (or the journalctl command that shows it).",
        discussion: "On a terminal, each line is shown with its control characters escaped (ESC as \\x1B); piped or redirected, the app's bytes are written exactly. --json prints one object: destination (the log folder, or journal), and then file and lines (each line's text; bytes that are not UTF-8 become U+FFFD), or command (under the journal).")

    @OptionGroup var options: CommonOptions

    @Argument(help: "The app's bundle id, or a desktop app's desktop file ID (org.example.Mail.desktop).")
    var id: String

    @Option(name: .customShort("n"), help: "Only the last N lines.")
    var lines: Int?

    func validate() throws {
        if let lines, lines < 0 { throw ValidationError("-n takes a count of lines, 0 or more") }
    }

    func run() throws {
        // The daemon's documents are read here, not printed: --json prints this verb's own.
        var daemon = options
        daemon.json = false
        let status = try daemon.query(.status, as: StatusReport.self)
        guard let destination = status.appLogs else {
            complain("launchservicesd does not say where app output goes (a daemon before appLogs, whose apps write to its own output; or lsctl run by an app, which is not told)")
            throw ExitCode.failure
        }
        let registered = try daemon.query(.apps, as: [AppReport].self).contains { $0.id == id }
        // A desktop app the daemon started, by its desktop file ID: its output goes to the
        // journal under its application ID (the ID without .desktop), or to ID.log.
        let desktop = !registered && id.hasSuffix(".desktop") && id.count > 8
        var fields = ["\"app\":\(JSONText.quote(id))", "\"destination\":\(JSONText.quote(destination))"]
        if destination == "journal" {
            guard registered || desktop else { throw unknown() }
            let identifier = desktop ? String(id.dropLast(8)) : id
            let command = "journalctl --user -t \(identifier)\(lines.map { " -n \($0)" } ?? "")"
            guard options.json else { return printEscaped(command) }
            fields.append("\"command\":\(JSONText.quote(command))")
            return printJSON("{" + fields.joined(separator: ",") + "}")
        }
        let file = destination + "/" + id + ".log"
        fields.append("\"file\":\(JSONText.quote(file))")
        let fm = FileManager.default
        guard !id.contains("/"), fm.fileExists(atPath: file) || fm.fileExists(atPath: file + ".1") else {
            guard registered || desktop else { throw unknown() }
            guard options.json else { return complain("\(id) has written nothing yet (\(file))") }
            return printJSON("{" + fields.joined(separator: ",") + ",\"lines\":[]}")
        }
        // The rotated file first: it holds the older lines.
        var data = Data()
        for path in [file + ".1", file] {
            if let part = fm.contents(atPath: path) { data.append(part) }
        }
        let log = LogLines(data)
        let shown = lines.map { log.lines.suffix($0) } ?? log.lines[...]
        if options.json {
            let texts = shown.map { JSONText.quote(String(decoding: $0, as: UTF8.self)) }
            return printJSON("{" + fields.joined(separator: ",") + ",\"lines\":[" + texts.joined(separator: ",") + "]}")
        }
        guard isatty(STDOUT_FILENO) == 1 else { return FileHandle.standardOutput.write(log.bytes(of: shown)) }
        for line in shown { printEscaped(String(decoding: line, as: UTF8.self)) }
    }

    private func unknown() -> Error {
        complain("no app '\(id)' is registered, and it has no log")
        return ExitCode.failure
    }
}

/// A log's bytes as lines: a newline ends a line (the last one too) rather than starting an
/// empty one, and whether the log ended with one is kept, so lines written back out are
/// exactly the log's bytes.
struct LogLines {
    var lines: [Data]
    var endsWithNewline: Bool

    init(_ data: Data) {
        endsWithNewline = data.last == UInt8(ascii: "\n")
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if endsWithNewline || data.isEmpty { lines.removeLast() }
        self.lines = lines
    }

    /// `some` of the lines (a suffix, for `-n`) as the log held them.
    func bytes(of some: ArraySlice<Data>) -> Data {
        var out = Data()
        for (index, line) in some.enumerated() {
            out.append(line)
            if index < some.count - 1 || endsWithNewline { out.append(UInt8(ascii: "\n")) }
        }
        return out
    }
}
