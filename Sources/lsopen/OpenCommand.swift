#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesClient
import LaunchServicesCore

/// One lsopen run, decided from its arguments: what to open and how. Both ways of reading
/// the command line produce it — swift-argument-parser's (`LSOpen`, every form, help and
/// errors) and the quick reading of the plain forms (`QuickArguments`) — so everything after
/// parsing, output and exit status included, is one code path.
struct OpenCommand: Equatable {
    var url: String
    var canOpen = false
    var wait = false
    var json = false
    var annotation: String?
    /// An annotation of any property-list type, written as JSON (`PropertyListJSON`).
    var annotationJSON: String?
    /// An annotation of any property-list type, read from an XML property list file.
    var annotationPlist: String?
    var appID: String?
    var ask: Bool?
    var background = false
    var fallback: String?
    var timeout: Double = 60
    var socket: String?

    /// Combinations that make no sense, named; the same rules for both readings. The
    /// annotation's value is not read here: `run` reads it once (a file read twice could
    /// change in between) and refuses it as a usage error too.
    func problem() -> String? {
        guard timeout > 0, timeout <= 86_400 else { return "--timeout must be between 0 and 86400 seconds, not \(timeout)" }
        guard !(wait && canOpen) else { return "--wait and --can-open cannot be combined" }
        guard !(appID != nil && ask == true) else { return "--app and --ask cannot be combined: --app already chooses the app" }
        guard !(canOpen && (appID != nil || background || fallback != nil)) else { return "--can-open only asks; --app, --background and --fallback apply to opening" }
        guard [annotation, annotationJSON, annotationPlist].compactMap({ $0 }).count <= 1 else {
            return "give one of --annotation (a string), --annotation-json and --annotation-plist (any property-list value)"
        }
        return nil
    }

    /// The annotation to send: `--annotation`'s string, `--annotation-json`'s value or the
    /// value in `--annotation-plist`'s file; a named problem when it cannot be read.
    func annotationValue() -> Result<PropertyListValue?, AnnotationProblem> {
        if let annotation { return .success(.string(annotation)) }
        if let annotationJSON {
            do {
                return .success(try PropertyListJSON.parse(annotationJSON))
            } catch {
                return .failure(AnnotationProblem(description: "--annotation-json: \(error)"))
            }
        }
        if let annotationPlist {
            return AnnotationFile.read(annotationPlist).map { Optional($0) }.mapError { AnnotationProblem(description: $0.description) }
        }
        return .success(nil)
    }

    /// Why an annotation option cannot be sent (a usage error, exit 64).
    struct AnnotationProblem: Error, CustomStringConvertible {
        var description: String
    }

    /// Does what was asked and exits with lsopen's status (see `LSOpen`'s discussion).
    func run() -> Never {
        let limit = Duration.milliseconds(Int64(timeout * 1000))
        // The one reading of the annotation, before anything is asked of the daemon.
        let annotationValue: PropertyListValue?
        switch self.annotationValue() {
        case .success(let value): annotationValue = value
        case .failure(let problem):
            StandardStreams.error("lsopen: \(problem)\n")
            exit(ExitCodes.usage)
        }
        let client: LaunchServicesClient
        do {
            client = try LaunchServicesClient(socketPath: socket, program: "lsopen")
        } catch {
            fail(error.code, error.description)
        }
        if canOpen { finish(askCanOpen(client, timeout: limit), client) }
        if wait {
            let waiter = CallbackWaiter(client: client, url: url, annotation: annotationValue, timeout: limit, json: json)
            finish(waiter.run(fail: fail), client)
        }
        var chosen = appID
        if chosen == nil, ask != false, HandlerChooser.hasTerminal {
            do {
                if case .app(let app) = try HandlerChooser(client: client, url: url, timeout: limit).decide(forced: ask == true) { chosen = app }
            } catch let error as ClientError {
                fail(error.code, error.description)
            } catch {
                fail(.protocolError, "\(error)")
            }
        }
        var report = open(url, in: chosen, annotation: annotationValue, client: client, timeout: limit)
        if let fallback, report.outcome.error?.code == .noHandler, chosen == nil {
            // The seed's cross-promotion: no app for this scheme, so open the other link.
            report = open(fallback, in: nil, annotation: annotationValue, client: client, timeout: limit)
            report.fellBackFrom = url
        }
        show(report)
        finish(ExitCodes.code(for: report.outcome.error?.code), client)
    }

    /// `--can-open`: 0 when some app handles the scheme, 1 when none does.
    func askCanOpen(_ client: LaunchServicesClient, timeout: Duration) -> Int32 {
        let answer: (canOpen: Bool, app: String?)
        do {
            answer = try client.canOpen(url, timeout: timeout)
        } catch {
            fail(error.code, error.description)
        }
        if json {
            var fields = ["\"canOpen\":\(answer.canOpen)", "\"url\":\(JSONText.quote(url))"]
            if let app = answer.app { fields.append("\"app\":\(JSONText.quote(app))") }
            print("{" + fields.joined(separator: ",") + "}")
        } else {
            let shown = TerminalText.escapingControls(url)
            print(answer.canOpen ? "\(shown): opens with \(answer.app ?? "an app")" : "\(shown): no app handles this scheme")
        }
        return answer.canOpen ? 0 : ExitCodes.failure
    }

    /// One open, timed as lsopen saw it.
    func open(_ target: String, in app: String?, annotation annotationValue: PropertyListValue?, client: LaunchServicesClient, timeout: Duration) -> OpenReport {
        let started = ContinuousClock.now
        let outcome: OpenOutcome
        do {
            outcome = try client.open(target, annotation: annotationValue, options: OpenOptions(app: app, background: background), timeout: timeout)
        } catch {
            fail(error.code, error.description)
        }
        let waited = ContinuousClock.now - started
        return OpenReport(url: target, outcome: outcome, waitNanoseconds: UInt64(max(0, waited.components.seconds)) * 1_000_000_000 + UInt64(max(0, waited.components.attoseconds)) / 1_000_000_000)
    }

    func show(_ report: OpenReport) {
        if json {
            print(OutcomeJSON.render(report.outcome, url: report.url, waitNanoseconds: report.waitNanoseconds, fellBackFrom: report.fellBackFrom))
            return
        }
        if let from = report.fellBackFrom {
            StandardStreams.error("lsopen: no app handles \(TerminalText.escapingControls(from)); opening the fallback \(TerminalText.escapingControls(report.url))\n")
        }
        if let error = report.outcome.error {
            // A desktop app's failure ends with its last stderr lines, one per line.
            let lines = error.message.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.escapingControls(String($0)) }
            StandardStreams.error("lsopen: " + lines.joined(separator: "\n") + "\n")
        } else {
            print(OutcomeJSON.successLine(report.outcome, url: report.url, waitNanoseconds: report.waitNanoseconds))
        }
    }

    /// Reports a failure before any outcome existed, then exits with its code.
    func fail(_ code: OpenErrorCode, _ message: String) -> Never {
        if json {
            print("{\"opened\":false,\"url\":\(JSONText.quote(url)),\"error\":{\"code\":\(JSONText.quote(code.rawValue)),\"message\":\(JSONText.quote(message))}}")
        } else {
            StandardStreams.error("lsopen: \(TerminalText.escapingControls(message))\n")
        }
        exit(ExitCodes.code(for: code))
    }

    /// Closes the connection and exits; `exit` flushes standard output.
    private func finish(_ status: Int32, _ client: LaunchServicesClient) -> Never {
        client.close()
        exit(status)
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
