import LaunchServicesApp

/// The paste service from Erica Sadun's cookbook (Recipe 16-6's neighbour):
///
///   x-sadun-services:paste?scheme=iping&data=hello+world&clipboard=test1&password=foobar&expire=1500
///
/// puts `data` (`+` is a space) on the named pasteboard `clipboard` (default: general),
/// protected by `password` and gone after `expire` seconds, then returns control to the
/// caller at `scheme` (`SCHEME://pasted?clipboard=NAME&changeCount=N`). The return is a
/// returning open: launchservicesd refuses it unless SCHEME opens in the very app that
/// asked, so a caller that lies about `scheme` cannot send control to a third app.
///
/// `copy` reads it back (`clipboard`, `password`); both actions also work as
/// x-callback-url (`x-sadun-services://x-callback-url/paste?…&x-success=…`), replying with
/// `clipboard` and `changeCount` (paste) or `data` (copy).
final class SadunServicesDelegate: ApplicationDelegate {
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        let caller = application.callbackRequest(url, sourceApplication: sourceApplication)
        let action = caller?.action ?? url.path
        func value(_ name: String) -> String? { url.queryValue(name, plusAsSpace: true) }
        let clipboard = value("clipboard").flatMap { $0.isEmpty ? nil : $0 }
        let board = application.pasteboard(named: clipboard)
        let shown = clipboard ?? "general"
        switch action {
        case "paste":
            guard let data = value("data") else {
                say("paste from \(sourceApplication ?? "?") without data=…; nothing pasted")
                if let caller { application.reply(caller, .error(code: "missingData", message: "pass data=… to paste")); return true }  // answered through x-error
                return false
            }
            var expire: UInt64?
            if let text = value("expire") {
                guard let seconds = UInt64(text), seconds > 0 else {
                    say("expire=\(text) is not a number of seconds; nothing pasted")
                    if let caller { application.reply(caller, .error(code: "badExpire", message: "expire must be a positive number of seconds, not '\(text)'")); return true }  // answered through x-error
                    return false
                }
                expire = seconds
            }
            let changeCount: UInt64
            do {
                changeCount = try board.copy(text: data, expireSeconds: expire, password: value("password"))
            } catch {
                say("could not paste to '\(shown)': \(error)")
                if let caller { application.reply(caller, .error(code: "pasteFailed", message: "\(error)")); return true }  // answered through x-error
                return false
            }
            say("pasted \(data.utf8.count) bytes for \(sourceApplication ?? "?") to pasteboard '\(shown)'\(value("password") != nil ? " (password-protected)" : "")\(expire.map { ", expires in \($0) s" } ?? "")")
            let results = [QueryItem(name: "clipboard", value: shown), QueryItem(name: "changeCount", value: "\(changeCount)")]
            if let caller {
                application.reply(caller, .success(results), completion: report)
            } else if let scheme = value("scheme"), !scheme.isEmpty {
                returnControl(application, scheme: scheme, results: results, to: sourceApplication)
            }
            return true
        case "copy":
            do {
                let text = try board.text(password: value("password"))
                say("read pasteboard '\(shown)' for \(sourceApplication ?? "?"): \(text.map { "\($0.utf8.count) bytes" } ?? "empty")")
                if let caller { application.reply(caller, .success([QueryItem(name: "data", value: text ?? "")]), completion: report) }
            } catch {
                say("could not read '\(shown)': \(error)")
                if let caller { application.reply(caller, .error(code: "copyFailed", message: "\(error)")); return true }  // answered through x-error
                return false
            }
            return true
        default:
            say("unknown service '\(action)' in \(url); known: paste, copy")
            if let caller { application.reply(caller, .error(code: "unknownAction", message: "x-sadun-services offers paste and copy")); return true }  // answered through x-error
            return false
        }
    }

    /// The cookbook's "reverse scheme element": call home at the caller's scheme, but only
    /// if that scheme opens in the caller itself.
    func returnControl(_ application: Application, scheme: String, results: [QueryItem], to caller: String?) {
        guard let caller, (try? URLScheme(validating: scheme)) != nil else {
            say("scheme=\(scheme) is not a URL scheme; not returning")
            return
        }
        let url = XCallbackRequest.append(results, to: "\(scheme)://pasted")
        application.open(url, returningTo: caller) { outcome in
            if let error = outcome.error {
                say("did not return to \(caller) at \(scheme): \(error.message)")
            } else {
                say("returned control to \(outcome.app ?? caller)")
            }
        }
    }

    func report(_ outcome: OpenOutcome) {
        if let error = outcome.error { say("callback refused: \(error.message)") } else { say("called back \(outcome.app ?? "?")") }
    }
}

func say(_ text: String) { StandardStreams.output("[x-sadun-services] \(text)\n") }

Application.main(delegate: SadunServicesDelegate())
