import LaunchServicesClient
import LaunchServicesCore

/// `lsopen --wait`: calls an x-callback-url service as a shell script's synchronous call.
/// lsopen owns no scheme, so it reserves a callback address from the daemon
/// (`x-lsopen-callback://TOKEN`), names it as x-success, x-error and x-cancel, opens the
/// URL, and waits on the same connection for the app to call one of them.
struct CallbackWaiter {
    let client: LaunchServicesClient
    let url: String
    let annotation: PropertyListValue?
    let timeout: Duration
    let json: Bool

    /// Runs the call; returns lsopen's exit status. `fail` reports errors before an outcome.
    func run(fail: (OpenErrorCode, String) -> Never) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        let request: XCallbackRequest
        do {
            request = try XCallbackRequest(try ParsedURL(url))
        } catch let error as URLError {
            fail(.invalidURL, "invalid URL: \(error)")
        } catch {
            StandardStreams.error("lsopen: --wait needs an x-callback-url: \(error)\n")
            return ExitCodes.usage
        }
        for (name, value) in [("x-success", request.success), ("x-error", request.error), ("x-cancel", request.cancel)] where value != nil {
            StandardStreams.error("lsopen: the URL already names \(name); --wait supplies its own callbacks, so leave x-success, x-error and x-cancel out\n")
            return ExitCodes.usage
        }
        let reservation: (id: UInt32, address: String)
        do {
            reservation = try client.reserveCallback(timeout: timeout)
        } catch {
            fail(error.code, error.description)
        }
        var added: [QueryItem] = []
        if request.source == nil { added.append(QueryItem(name: "x-source", value: "lsopen")) }
        added += [QueryItem(name: "x-success", value: reservation.address + "/success"),
                  QueryItem(name: "x-error", value: reservation.address + "/error"),
                  QueryItem(name: "x-cancel", value: reservation.address + "/cancel")]
        let call = XCallbackRequest.append(added, to: url)
        let outcome: OpenOutcome
        do {
            outcome = try client.open(call, annotation: annotation, timeout: timeout)
        } catch {
            fail(error.code, error.description)
        }
        if let error = outcome.error {
            if json { print(OutcomeJSON.render(outcome, url: url)) } else { StandardStreams.error("lsopen: \(TerminalText.escapingControls(error.message))\n") }
            return ExitCodes.code(for: error.code)
        }
        let app = outcome.app ?? "the app"
        let callback: (url: String, sourceApplication: String)
        do {
            callback = try client.waitForCallback(id: reservation.id, until: deadline)
        } catch {
            if case .timedOut = error {
                report(result: "timeout", app: app, parameters: [], callbackURL: nil,
                       message: "\(app) opened \(TerminalText.quoted(url)) but did not call back within \(timeout)")
                return ExitCodes.callbackTimeout
            }
            fail(error.code, error.description)
        }
        guard let returned = try? ParsedURL(callback.url) else {
            fail(.protocolError, "the callback URL \(TerminalText.quoted(callback.url)) does not parse")
        }
        let parameters = returned.queryItems()
        switch returned.path {
        case "/success":
            report(result: "success", app: callback.sourceApplication, parameters: parameters, callbackURL: callback.url, message: nil)
            return 0
        case "/error":
            let code = parameters.first { $0.name == "errorCode" }?.value ?? "?"
            let message = parameters.first { $0.name == "errorMessage" }?.value ?? "(no errorMessage)"
            report(result: "error", app: callback.sourceApplication, parameters: parameters, callbackURL: callback.url,
                   message: "\(callback.sourceApplication) answered with an error: \(message) (errorCode \(code))")
            return ExitCodes.callbackError
        default:
            report(result: "cancel", app: callback.sourceApplication, parameters: parameters, callbackURL: callback.url,
                   message: "\(callback.sourceApplication) cancelled the request")
            return ExitCodes.callbackCancelled
        }
    }

    /// Success prints the parameters on stdout (`name=value` lines); anything else a message
    /// on stderr. With --json, one object on stdout either way, each value exactly as sent.
    func report(result: String, app: String, parameters: [QueryItem], callbackURL: String?, message: String?) {
        if json {
            var fields = ["\"result\":\(JSONText.quote(result))", "\"opened\":true", "\"url\":\(JSONText.quote(url))", "\"app\":\(JSONText.quote(app))"]
            let values = parameters.map { "\(JSONText.quote($0.name)):\(JSONText.quote($0.value ?? ""))" }
            fields.append("\"parameters\":{" + values.joined(separator: ",") + "}")
            if let callbackURL { fields.append("\"callbackURL\":\(JSONText.quote(callbackURL))") }
            if let message { fields.append("\"message\":\(JSONText.quote(message))") }
            print("{" + fields.joined(separator: ",") + "}")
            return
        }
        // The app's own words (its errorMessage) are shown, never acted on by the terminal.
        if let message { StandardStreams.error("lsopen: \(TerminalText.escapingControls(message))\n") }
        // The callee chose the names and values: a decoded `%0A` would forge a second
        // `name=value` line for a script reading this, `%1B` reach the terminal. Each
        // parameter stays on its own line, control characters escaped; --json has them exact.
        if result == "success" {
            for item in parameters { print(TerminalText.escapingControls("\(item.name)=\(item.value ?? "")")) }
        }
    }
}
