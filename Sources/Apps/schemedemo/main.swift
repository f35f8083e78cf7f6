import LaunchServicesApp

/// The calling side of the seed screencast: asks wordrev to reverse a word and receives the
/// answer at its own callback URLs (`schemedemo://success|error|cancel?session=N`; the
/// session survives because wordrev appends to the callback's own query).
///
///   schemedemo://reverse?word=…                      ask, print the answer when it comes
///   schemedemo://x-callback-url/reverse?word=…&x-…   the same, then pass the answer on to
///                                                    whoever asked (e.g. lsopen --wait)
final class SchemeDemoDelegate: ApplicationDelegate {
    static let service = "x-callback-wordrev"
    /// Requests waiting for wordrev's answer, by session; each with the caller to pass it on to.
    var sessions: [Int: (word: String, caller: CallbackRequest?)] = [:]
    var nextSession = 1
    static let maximumSessions = 64

    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        let caller = application.callbackRequest(url, sourceApplication: sourceApplication)
        let action = caller?.action ?? url.host ?? ""
        switch action {
        case "reverse":
            let word = caller?.parameter("word") ?? url.queryValue("word") ?? ""
            return ask(application, word: word, caller: caller)
        case "success", "error", "cancel":
            return answer(application, action: action, url: url, from: sourceApplication)
        default:
            say("unknown request \(url)")
            if let caller { application.reply(caller, .error(code: "unknownAction", message: "schemedemo knows 'reverse'")); return true }  // answered through x-error
            return false
        }
    }

    func ask(_ application: Application, word: String, caller: CallbackRequest?) -> Bool {
        guard application.canOpenURL("\(Self.service)://x-callback-url") else {
            say("no app handles \(Self.service): is wordrev installed?")
            if let caller { application.reply(caller, .error(code: "noService", message: "no app handles \(Self.service)")) }
            return true
        }
        if sessions.count >= Self.maximumSessions, let oldest = sessions.keys.min() { sessions[oldest] = nil }
        let session = nextSession
        nextSession += 1
        sessions[session] = (word, caller)
        let request = XCallbackRequest(
            scheme: try! URLScheme(validating: Self.service), action: "reverse", source: "SchemeDemo",
            success: "schemedemo://success?session=\(session)", error: "schemedemo://error?session=\(session)",
            cancel: "schemedemo://cancel?session=\(session)", parameters: [QueryItem(name: "word", value: word)])
        say("asking wordrev to reverse '\(word)' (session \(session))")
        application.open(request.url) { outcome in
            if let error = outcome.error {
                say("wordrev could not be opened: \(error.message)")
                if let caller = self.sessions.removeValue(forKey: session)?.caller {
                    application.reply(caller, .error(code: error.code.rawValue, message: error.message))
                }
            }
        }
        return true
    }

    func answer(_ application: Application, action: String, url: ParsedURL, from source: String?) -> Bool {
        guard let session = url.queryValue("session").flatMap({ Int($0) }), let pending = sessions.removeValue(forKey: session) else {
            say("ignoring \(action) for an unknown session: \(url)")
            return false
        }
        switch action {
        case "success":
            let reversed = url.queryValue("word") ?? ""
            say("\(source ?? "?") reversed '\(pending.word)' → '\(reversed)'")
            if let caller = pending.caller { application.reply(caller, .success([QueryItem(name: "word", value: reversed)])) }
        case "error":
            let message = url.queryValue("errorMessage") ?? "?"
            say("\(source ?? "?") failed: \(message) (errorCode \(url.queryValue("errorCode") ?? "?"))")
            if let caller = pending.caller { application.reply(caller, .error(code: url.queryValue("errorCode") ?? "wordrev", message: message)) }
        default:
            say("\(source ?? "?") cancelled reversing '\(pending.word)'")
            if let caller = pending.caller { application.reply(caller, .cancel) }
        }
        return true
    }
}

func say(_ text: String) { StandardStreams.output("[schemedemo] \(text)\n") }

Application.main(delegate: SchemeDemoDelegate())
