#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesApp

/// The Twitterrific-style service from the cookbook: `tweeter://post?message=…` opens a
/// prefilled post. The point of the service is the credentials: they live only in this
/// app's own folder (created owner-only on first run, as if the user had signed in here
/// once), so a calling app posts without ever handling them.
///
/// There is no network: a sent post is appended to the `outbox` file in the app's folder,
/// attributed to the account, never carrying the token. As x-callback-url
/// (`tweeter://x-callback-url/post?message=…&x-success=…`) it replies with `postId`.
final class TweeterDelegate: ApplicationDelegate {
    static let maximumLength = 280

    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        let caller = application.callbackRequest(url, sourceApplication: sourceApplication)
        let action = caller?.action ?? url.host ?? url.path
        guard action == "post" || action == "/post" else {
            say("unknown request \(url); tweeter offers tweeter://post?message=…")
            if let caller { application.reply(caller, .error(code: "unknownAction", message: "tweeter offers 'post'")); return true }  // answered through x-error
            return false
        }
        let message = caller?.parameter("message") ?? url.queryValue("message") ?? ""
        guard !message.isEmpty, message.count <= Self.maximumLength else {
            let why = message.isEmpty ? "the message is empty" : "the message has \(message.count) characters; at most \(Self.maximumLength) fit"
            say("not posting for \(sourceApplication ?? "?"): \(why)")
            if let caller { application.reply(caller, .error(code: message.isEmpty ? "emptyMessage" : "tooLong", message: why)); return true }  // answered through x-error
            return false
        }
        let credentials: Credentials
        do {
            credentials = try Credentials.load(application.storage)
        } catch {
            say("cannot read or create the credentials: \(error)")
            if let caller { application.reply(caller, .error(code: "noCredentials", message: "tweeter has no usable credentials")); return true }  // answered through x-error
            return false
        }
        say("composing a post for \(sourceApplication ?? "?") as \(credentials.account): \"\(message)\"")
        let postID = (application.storage.readText("outbox")?.split(separator: "\n").count ?? 0) + 1
        do {
            try application.storage.appendLine("outbox", "\(postID)\t\(credentials.account)\t\(sourceApplication ?? "?")\t\(PercentEncoding.encodeComponent(message))")
        } catch {
            say("could not send: \(error)")
            if let caller { application.reply(caller, .error(code: "sendFailed", message: "\(error)")); return true }  // answered through x-error
            return false
        }
        // The token signs the request inside this app; only a fingerprint is ever shown.
        say("posted #\(postID) as \(credentials.account), signed with the stored token (…\(credentials.token.suffix(4)))")
        if let caller { application.reply(caller, .success([QueryItem(name: "postId", value: "\(postID)"), QueryItem(name: "account", value: credentials.account)])) }
        return true
    }
}

/// The account and its token, in `credentials` (mode 0600) in the app's own folder.
struct Credentials {
    var account: String
    var token: String

    static func load(_ storage: AppStorage) throws(ClientError) -> Credentials {
        if let text = storage.readText("credentials") {
            var values: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { values[parts[0]] = parts[1] }
            }
            if let account = values["account"], let token = values["token"] { return Credentials(account: account, token: token) }
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
        let credentials = Credentials(account: "@demo", token: token)
        try storage.write("credentials", text: "account=\(credentials.account)\ntoken=\(credentials.token)\n")
        say("signed in as \(credentials.account) (first run); the token stays in \(storage.path("credentials"))")
        return credentials
    }
}

func say(_ text: String) { StandardStreams.output("[tweeter] \(text)\n") }

Application.main(delegate: TweeterDelegate())
