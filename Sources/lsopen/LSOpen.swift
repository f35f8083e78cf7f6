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
        """,
        version: LaunchServicesVersion.current)

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

    @Option(name: .customLong("app"), help: ArgumentHelp("Open in this app (it must declare the scheme), like open -b.", valueName: "bundle-id"))
    var appID: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Ask which app, on a terminal (--ask: even when the scheme has one handler or a default; --no-ask: never).", discussion: "Without either, lsopen asks only when the scheme is claimed by several apps, no default is set, and it runs on a terminal."))
    var ask: Bool?

    @Flag(help: "Deliver the URL without bringing the app to the front; the frontmost app stays.")
    var background = false

    @Option(help: ArgumentHelp("When no app handles the URL's scheme, open this URL instead (a store page, say).", valueName: "url"))
    var fallback: String?

    @Option(help: "Seconds to wait for the daemon's answer (with --wait: for the callback too).")
    var timeout: Double = 60

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be between 0 and 86400 seconds, not \(timeout)") }
        guard !(wait && canOpen) else { throw ValidationError("--wait and --can-open cannot be combined") }
        guard !(appID != nil && ask == true) else { throw ValidationError("--app and --ask cannot be combined: --app already chooses the app") }
        guard !(canOpen && (appID != nil || background || fallback != nil)) else { throw ValidationError("--can-open only asks; --app, --background and --fallback apply to opening") }
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
        var chosen = appID
        if chosen == nil, ask != false, HandlerChooser.hasTerminal {
            do {
                if case .app(let app) = try HandlerChooser(client: client, url: url, timeout: limit).decide(forced: ask == true) { chosen = app }
            } catch let error as ClientError {
                fail(error.code, error.description)
            }
        }
        var report = open(url, in: chosen, client: client, timeout: limit)
        if let fallback, report.outcome.error?.code == .noHandler, chosen == nil {
            // The seed's cross-promotion: no app for this scheme, so open the other link.
            report = open(fallback, in: nil, client: client, timeout: limit)
            report.fellBackFrom = url
        }
        show(report)
        throw ExitCode(ExitCodes.code(for: report.outcome.error?.code))
    }

    /// One open, timed as lsopen saw it.
    func open(_ target: String, in app: String?, client: LaunchServicesClient, timeout: Duration) -> OpenReport {
        let started = ContinuousClock.now
        let outcome: OpenOutcome
        do {
            outcome = try client.open(target, annotation: annotation.map { .string($0) }, options: OpenOptions(app: app, background: background), timeout: timeout)
        } catch {
            fail(error.code, error.description)
        }
        let waited = ContinuousClock.now - started
        return OpenReport(url: target, outcome: outcome, waitNanoseconds: UInt64(max(0, waited.components.seconds)) * 1_000_000_000 + UInt64(max(0, waited.components.attoseconds)) / 1_000_000_000)
    }

    func show(_ report: OpenReport) {
        if json {
            Swift.print(OutcomeJSON.render(report.outcome, url: report.url, waitNanoseconds: report.waitNanoseconds, fellBackFrom: report.fellBackFrom))
            return
        }
        if let from = report.fellBackFrom {
            StandardStreams.error("lsopen: no app handles \(from); opening the fallback \(report.url)\n")
        }
        if let error = report.outcome.error {
            StandardStreams.error("lsopen: \(error.message)\n")
        } else {
            Swift.print("opened \(report.url) in \(report.outcome.app ?? "?") (\(OutcomeJSON.summary(report.outcome, waitNanoseconds: report.waitNanoseconds)))")
        }
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

/// An open as lsopen reports it: the outcome, the wait the caller saw, and whether it was
/// the fallback of another URL.
struct OpenReport {
    var url: String
    var outcome: OpenOutcome
    var waitNanoseconds: UInt64
    var fellBackFrom: String?
}
