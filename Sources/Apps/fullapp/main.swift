import LaunchServicesApp

/// The full version of the seed's lite-to-full upgrade.
///
/// At every launch (`didFinishLaunching`) it asks canOpenURL whether the lite version is
/// installed (`liteapp` is in its LSApplicationQueriesSchemes), prints the answer and appends
/// it to `launch-checks` in its own storage (`liteInstalled` or `noLiteVersion`, one line a
/// launch). Finding it means the user upgraded: the conversion is remembered
/// (`upgradedFromLite`), the user is thanked, and unless the data was imported before (or
/// this launch is the lite version's own `fullapp://import`) the migration starts.
///
/// When the user opens it (`fullapp://launch`, or `fullapp://x-callback-url/migrate` to get
/// an answer), it checks its `importedFromLite` flag; if it has not imported yet, it asks
/// canOpenURL whether the lite version is installed, and if so opens `liteapp://export`.
/// The lite version puts its data on a pasteboard and opens `fullapp://import`; the full
/// version reads it, keeps it, sets the flag (in its own defaults, kept across runs) and
/// clears the pasteboard. Every later run finds the flag and imports nothing.
final class FullAppDelegate: ApplicationDelegate {
    static let liteVersion = "com.example.numerology-lite"
    static let handOver = "com.example.numerology.import"
    static let flag = "importedFromLite"
    /// Who asked for a migration and waits for its result (x-callback-url).
    var waiting: [CallbackRequest] = []
    /// Set while the lite version is asked to export, so a second request does not ask again.
    var exportRequested = false

    /// The seed's check, at every launch: is the lite version installed?
    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        let installed = application.canOpenURL("liteapp://export")
        try? application.storage.appendLine("launch-checks", installed ? "liteInstalled" : "noLiteVersion")
        guard installed else {
            say("launch check: no lite version installed")
            return true
        }
        say("launch check: the lite version is installed")
        if !application.defaults.bool("upgradedFromLite") {
            try? application.defaults.set(true, for: "upgradedFromLite")
            say("an upgrade from the lite version: thank you for buying the full version!")
        }
        // The lite version's own hand-over launches us too: that import needs no new export.
        if !application.defaults.bool(Self.flag) && options.url?.host != "import" {
            migrate(application, caller: nil)
        }
        return true
    }

    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        let caller = application.callbackRequest(url, sourceApplication: sourceApplication)
        switch caller?.action ?? url.host ?? "" {
        case "launch", "migrate":
            migrate(application, caller: caller)
            return true
        case "import":
            return importData(application, from: sourceApplication)
        default:
            say("unknown request \(url)")
            if let caller { application.reply(caller, .error(code: "unknownAction", message: "fullapp offers launch, migrate and import")); return true }  // answered through x-error
            return false
        }
    }

    func migrate(_ application: Application, caller: CallbackRequest?) {
        if application.defaults.bool(Self.flag) {
            say("the lite version's data was imported before (\(application.defaults.string("importedCount") ?? "?") notes); nothing to import")
            if let caller { application.reply(caller, .success([QueryItem(name: "imported", value: "0"), QueryItem(name: "reason", value: "alreadyImported")])) }
            return
        }
        guard application.canOpenURL("liteapp://export") else {
            say("no lite version installed; starting fresh")
            if let caller { application.reply(caller, .success([QueryItem(name: "imported", value: "0"), QueryItem(name: "reason", value: "noLiteVersion")])) }
            return
        }
        if let caller { waiting.append(caller) }
        guard !exportRequested else {
            say("the lite version is already exporting; waiting for it")
            return
        }
        exportRequested = true
        say("the lite version is installed: thanks for upgrading! asking it for its data")
        application.open("liteapp://export") { outcome in
            guard let error = outcome.error else { return }
            say("the lite version did not export: \(error.message)")
            self.exportRequested = false
            for caller in self.waiting { application.reply(caller, .error(code: error.code.rawValue, message: error.message)) }
            self.waiting = []
        }
    }

    func importData(_ application: Application, from source: String?) -> Bool {
        guard source == Self.liteVersion else {
            say("ignoring an import from \(source ?? "?"): data comes only from the lite version")
            return false
        }
        if application.defaults.bool(Self.flag) {
            say("import ignored: the lite version's data was imported before")
            return true
        }
        let board = application.pasteboard(named: Self.handOver)
        let text: String
        do {
            // The lite version hands over JSON and plain text; one note per line is all we need.
            guard let found = try board.paste().items.first(where: { $0.type == PasteboardType.plainText })?.text else {
                say("the hand-over pasteboard holds no plain text; nothing to import")
                return false
            }
            text = found
        } catch {
            say("could not read the hand-over pasteboard: \(error)")
            return false
        }
        let notes = text.split(separator: "\n").map(String.init)
        do {
            let existing = application.storage.readText("notes") ?? ""
            try application.storage.write("notes", text: existing + notes.map { $0 + "\n" }.joined())
            try application.defaults.set("\(notes.count)", for: "importedCount")
            try application.defaults.set(true, for: Self.flag)
            try board.clear()
        } catch {
            say("import failed, nothing marked as imported: \(error)")
            return false
        }
        exportRequested = false
        say("imported \(notes.count) notes from the lite version: \(notes.joined(separator: "; "))")
        for caller in waiting { application.reply(caller, .success([QueryItem(name: "imported", value: "\(notes.count)")])) }
        waiting = []
        return true
    }
}

func say(_ text: String) { StandardStreams.output("[fullapp] \(text)\n") }

Application.main(delegate: FullAppDelegate())
