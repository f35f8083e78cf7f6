import ArgumentParser
import Foundation
import LaunchServicesClient
import LaunchServicesProtocol

/// `lsctl logs ID [-n N]`: what a launched app wrote to stdout and stderr. The daemon's
/// `status` says where that goes (`appLogs`): into the journal, whose command this prints,
/// or into `ID.log` (and the rotated `ID.log.1`) in a folder, which this prints.
struct Logs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what a launched app wrote to stdout and stderr (or the journalctl command that shows it).")

    @Argument(help: "The app's bundle id.")
    var id: String

    @Option(name: .customShort("n"), help: "Only the last N lines.")
    var lines: Int?

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    func validate() throws {
        if let lines, lines < 0 { throw ValidationError("-n takes a count of lines, 0 or more") }
    }

    func run() throws {
        let options = try CommonOptions.parse(socket.map { ["--socket", $0] } ?? [])
        let status = try options.query(.status, as: StatusReport.self)
        guard let destination = status.appLogs else {
            StandardStreams.error("lsctl: launchservicesd does not say where app output goes (a daemon before appLogs, whose apps write to its own output; or lsctl run by an app, which is not told)\n")
            throw ExitCode.failure
        }
        let registered = try options.query(.apps, as: [AppReport].self).contains { $0.id == id }
        if destination == "journal" {
            guard registered else { throw unknown() }
            printEscaped("journalctl --user -t \(id)\(lines.map { " -n \($0)" } ?? "")")
            return
        }
        let file = destination + "/" + id + ".log"
        let fm = FileManager.default
        guard !id.contains("/"), fm.fileExists(atPath: file) || fm.fileExists(atPath: file + ".1") else {
            guard registered else { throw unknown() }
            StandardStreams.error("lsctl: \(id) has written nothing yet (\(file))\n")
            return
        }
        // The rotated file first: it holds the older lines.
        var data = Data()
        for path in [file + ".1", file] {
            if let part = fm.contents(atPath: path) { data.append(part) }
        }
        if let lines {
            var cut = data.endIndex
            var seen = 0
            // A final newline ends the last line rather than starting an empty one.
            var index = data.last == UInt8(ascii: "\n") ? data.index(before: data.endIndex) : data.endIndex
            while index > data.startIndex {
                let previous = data.index(before: index)
                if data[previous] == UInt8(ascii: "\n") {
                    seen += 1
                    if seen == lines { cut = index; break }
                }
                index = previous
            }
            if seen < lines { cut = data.startIndex }
            data = lines == 0 ? Data() : data[cut...]
        }
        FileHandle.standardOutput.write(data)
    }

    private func unknown() -> Error {
        StandardStreams.error("lsctl: no app '\(id)' is registered, and it has no log\n")
        return ExitCode.failure
    }
}
