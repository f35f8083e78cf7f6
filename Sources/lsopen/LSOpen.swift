import ArgumentParser
import LaunchServicesClient
import LaunchServicesCore

/// `lsopen URL`: open a URL through launchservicesd, like `open` and `xdg-open`.
@main
struct LSOpen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsopen",
        abstract: "Open a URL with the app that handles its scheme, through launchservicesd.",
        usage: usage,
        discussion: "Exit status: " + ExitCodes.lsopen.map { "\($0.status) \($0.meaning)" }.joined(separator: "; ") + """
        .
        Opens from lsopen carry the source application \(ExitCodes.shellIdentity).
        """,
        version: LaunchServicesVersion.current)

    /// The three forms lsopen takes, options grouped as they combine (`OpenCommand.problem`),
    /// instead of ArgumentParser's `lsopen [<options>] <url>`; --help and the man page's
    /// synopsis show it. LSOpenTests holds it to the options declared below.
    static let usage = """
        lsopen [--json] [--app <bundle-id>] [--ask | --no-ask] [--background] [--fallback <url>] [--annotation <annotation> | --annotation-json <json> | --annotation-plist <file>] [--timeout <timeout>] [--socket <socket>] <url>
        lsopen --can-open [--json] [--timeout <timeout>] [--socket <socket>] <url>
        lsopen --wait [--json] [--annotation <annotation> | --annotation-json <json> | --annotation-plist <file>] [--timeout <timeout>] [--socket <socket>] <url>
        """

    @Argument(help: "The URL to open, e.g. todolist://www.acme.com?Quarterly%20Report#200806231300")
    var url: String

    @Flag(help: "Only ask whether some app handles the URL's scheme; exit 0 (yes) or 1 (no), 65 for an invalid URL.")
    var canOpen = false

    @Flag(help: ArgumentHelp("Call an x-callback-url service and wait for its answer.", discussion: "lsopen adds its own x-success, x-error and x-cancel (and x-source=lsopen), waits for the app to call one back, and prints the returned parameters, one name=value per line with control characters escaped (JSON: one object, each value exact)."))
    var wait = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(help: "An annotation (a property-list string) passed to the app unchanged.")
    var annotation: String?

    @Option(help: ArgumentHelp("An annotation of any property-list type, written as JSON, passed to the app unchanged.",
                               discussion: "Objects become dictionaries, arrays arrays, numbers integers (without fraction or exponent) or reals, true/false booleans; null is refused. At most \(PropertyListJSON.maximumBytes / 1024) KiB and \(PropertyListJSON.maximumDepth) levels deep.",
                               valueName: "json"))
    var annotationJSON: String?

    @Option(help: ArgumentHelp("An annotation of any property-list type, read from an XML property list file, passed to the app unchanged.",
                               discussion: "Every type an annotation carries, <data> included; a <date> is refused (the wire has no date type), and so is a binary property list. At most \(XMLPropertyListReader.maximumBytes / 1024) KiB and \(XMLPropertyListReader.maximumDepth) levels deep.",
                               valueName: "file"))
    var annotationPlist: String?

    @Option(name: .customLong("app"), help: ArgumentHelp("Open in this app (it must declare the scheme), like open -b; or in this desktop entry, by its desktop file ID (e.g. org.example.Mail.desktop), when it can open the scheme.", valueName: "bundle-id"))
    var appID: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Ask which app, on a terminal (--ask: even when the scheme has one handler or a default; --no-ask: never).", discussion: "Without either, lsopen asks only when the scheme is claimed by several apps, no default is set, and it runs on a terminal."))
    var ask: Bool?

    @Flag(help: "Deliver the URL without bringing the app to the front; the frontmost app stays. Refused (exit 67) when the handler is a desktop app, which cannot be opened without coming to the front.")
    var background = false

    @Option(help: ArgumentHelp("When no app handles the URL's scheme, open this URL instead (a store page, say).", valueName: "url"))
    var fallback: String?

    @Option(help: "Seconds to wait for the daemon's answer (with --wait: for the callback too).")
    var timeout: Double = 60

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    /// The plain forms (`lsopen URL`, `lsopen --can-open URL`, …) skip the reflective parse,
    /// which is a third of lsopen's start; everything else, `--help` and every error
    /// included, is swift-argument-parser's.
    static func main() {
        if let command = QuickArguments.command(from: CommandLine.arguments.dropFirst()) { command.run() }
        main(nil)
    }

    var command: OpenCommand {
        OpenCommand(url: url, canOpen: canOpen, wait: wait, json: json, annotation: annotation, annotationJSON: annotationJSON, annotationPlist: annotationPlist, appID: appID, ask: ask,
                    background: background, fallback: fallback, timeout: timeout, socket: socket)
    }

    func validate() throws {
        if let problem = command.problem() { throw ValidationError(problem) }
    }

    func run() throws {
        command.run()
    }
}
