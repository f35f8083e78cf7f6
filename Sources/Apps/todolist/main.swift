import LaunchServicesApp

/// Apple's URL-scheme example: `todolist://www.acme.com?Quarterly%20Report#200806231300`.
/// The host names the list, the decoded query the item, the fragment its due date.
final class TodoListDelegate: ApplicationDelegate {
    func willFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        // Decide at launch whether the URL can be opened, as Apple's guide advises.
        guard let url = options.url, url.host?.isEmpty == false else {
            StandardStreams.output("[todolist] refusing \(options.urlString): no list host\n")
            return false
        }
        return true
    }

    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        StandardStreams.output("""
            [todolist] host: \(url.host ?? "(none)")
            [todolist] query: \(url.query ?? "(none)")
            [todolist] fragment: \(url.fragment ?? "(none)")
            [todolist] from: \(sourceApplication ?? "(unknown)")

            """)
        return true
    }
}

Application.main(delegate: TodoListDelegate())
