import ArgumentParser
import LaunchServicesClient
import LaunchServicesCore

/// `lsopen URL`: open a URL through launchservicesd, like `open` and `xdg-open`.
@main
struct LSOpen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsopen",
        abstract: "Open a URL with the app that handles its scheme, through launchservicesd.",
        discussion: """
        Exit status: 0 delivered and handled; 64 usage; 65 invalid URL; 66 no handler; \
        67 refused (vetoed, not handled, not permitted); 68 app failed (launch failed, crashed, timed out); \
        69 daemon unreachable or unavailable. With --can-open: 0 when a handler exists, 1 when not. \
        With --wait: 0 the app called back x-success; \(ExitCodes.callbackError) it called back x-error; \
        \(ExitCodes.callbackCancelled) it called back x-cancel; \(ExitCodes.callbackTimeout) no callback before --timeout.
        Opens from lsopen carry the source application \(ExitCodes.shellIdentity).
        """)

    @Argument(help: "The URL to open, e.g. todolist://www.acme.com?Quarterly%20Report#200806231300")
    var url: String

    @Flag(help: "Only ask whether some app handles the URL's scheme; exit 0 (yes) or 1 (no).")
    var canOpen = false

    @Flag(help: ArgumentHelp("Call an x-callback-url service and wait for its answer.", discussion: "lsopen adds its own x-success, x-error and x-cancel (and x-source=lsopen), waits for the app to call one back, and prints the returned parameters, one name=value per line (JSON: one object)."))
    var wait = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(help: "An annotation (a property-list string) passed to the app unchanged.")
    var annotation: String?

    @Option(help: "Seconds to wait for the daemon's answer (with --wait: for the callback too).")
    var timeout: Double = 60

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be between 0 and 86400 seconds, not \(timeout)") }
        guard !(wait && canOpen) else { throw ValidationError("--wait and --can-open cannot be combined") }
    }

    func run() throws {
        let limit = Duration.milliseconds(Int64(timeout * 1000))
        let client: LaunchServicesClient
        do {
            client = try LaunchServicesClient(socketPath: socket, program: "lsopen")
        } catch {
            fail(error.code, error.description)
        }
        defer { client.close() }
        if canOpen {
            do {
                let answer = try client.canOpen(url, timeout: limit)
                if json {
                    var fields = ["\"canOpen\":\(answer.canOpen)", "\"url\":\(JSONText.quote(url))"]
                    if let app = answer.app { fields.append("\"app\":\(JSONText.quote(app))") }
                    print("{" + fields.joined(separator: ",") + "}")
                } else {
                    print(answer.canOpen ? "\(url): opens with \(answer.app ?? "an app")" : "\(url): no app handles this scheme")
                }
                throw ExitCode(answer.canOpen ? 0 : 1)
            } catch let error as ClientError {
                fail(error.code, error.description)
            }
        }
        if wait {
            let waiter = CallbackWaiter(client: client, url: url, annotation: annotation.map { .string($0) }, timeout: limit, json: json)
            let status = waiter.run(fail: fail)
            throw ExitCode(status)
        }
        let outcome: OpenOutcome
        do {
            outcome = try client.open(url, annotation: annotation.map { .string($0) }, timeout: limit)
        } catch {
            fail(error.code, error.description)
        }
        if json {
            print(OutcomeJSON.render(outcome, url: url))
        } else if let error = outcome.error {
            StandardStreams.error("lsopen: \(error.message)\n")
        } else {
            let phases = outcome.timings.map { "\($0.phase.rawValue) \(OutcomeJSON.milliseconds($0.nanoseconds)) ms" }.joined(separator: ", ")
            print("opened \(url) in \(outcome.app ?? "?") (\(outcome.launched ? "launched" : "already running"); \(phases))")
        }
        throw ExitCode(ExitCodes.code(for: outcome.error?.code))
    }

    /// Reports a failure before any outcome existed, then exits with its code.
    func fail(_ code: OpenErrorCode, _ message: String) -> Never {
        if json {
            print("{\"opened\":false,\"url\":\(JSONText.quote(url)),\"error\":{\"code\":\(JSONText.quote(code.rawValue)),\"message\":\(JSONText.quote(message))}}")
        } else {
            StandardStreams.error("lsopen: \(message)\n")
        }
        LSOpen.exit(withError: ExitCode(ExitCodes.code(for: code)))
    }
}
