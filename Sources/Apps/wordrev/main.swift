import LaunchServicesApp

/// The x-callback-url service from the seed screencast: reverses a word and calls back.
///
///   wordrev://x-callback-url/reverse?word=…&x-success=…&x-error=…&x-cancel=…
///   x-callback-wordrev://x-callback-url?word=…   (the screencast's spelling; no action)
///
/// A missing `word` answers x-error (`errorCode=missingWord`), an empty one x-cancel (the
/// user dismissed an empty prompt), an unknown action x-error (`unknownAction`).
final class WordRevDelegate: ApplicationDelegate {
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        let source = sourceApplication ?? "(unknown)"
        guard let request = application.callbackRequest(url, sourceApplication: sourceApplication) else {
            // A plain URL: reverse and show it, nobody to call back.
            guard let word = url.queryValue("word") else {
                say("ignoring \(url): give word=…")
                return false
            }
            say("reversed '\(word)' → '\(reverse(word))' (no callback requested)")
            return true
        }
        if let warning = request.warning { say("warning from launchservicesd: \(warning)") }
        let result: CallbackResult
        switch request.action {
        case "reverse", "":
            if let word = request.parameter("word") {
                if word.isEmpty {
                    say("empty word from \(source) (x-source \(request.request.source ?? "-")): cancelled")
                    result = .cancel
                } else {
                    let reversed = reverse(word)
                    say("reverse '\(word)' for \(source) (x-source \(request.request.source ?? "-")) → '\(reversed)'")
                    result = .success([QueryItem(name: "word", value: reversed)])
                }
            } else {
                say("no word from \(source): replying x-error")
                result = .error(code: "missingWord", message: "no word to reverse; pass word=…")
            }
        default:
            say("unknown action '\(request.action)' from \(source): replying x-error")
            result = .error(code: "unknownAction", message: "wordrev knows only the action 'reverse', not '\(request.action)'")
        }
        let replied = application.reply(request, result) { outcome in
            if let error = outcome.error { say("callback refused: \(error.message)") } else { say("called back \(outcome.app ?? "?")") }
        }
        if !replied { say("\(source) gave no callback URL for this result; nothing to call") }
        return true
    }

    /// Reverses by characters (grapheme clusters), so accents and emoji survive.
    func reverse(_ word: String) -> String { String(word.reversed()) }
}

func say(_ text: String) { StandardStreams.output("[wordrev] \(text)\n") }

Application.main(delegate: WordRevDelegate())
