import LaunchServicesApp

/// The lite version of the seed's lite-to-full upgrade. `liteapp://export`, asked by its
/// full version, puts the user's data on a pasteboard and opens `fullapp://import`.
///
/// Only the full version may ask: the data is the user's, and the request's source
/// application is verified by launchservicesd, not claimed. The hand-over pasteboard
/// expires after five minutes, so unread data does not linger.
final class LiteAppDelegate: ApplicationDelegate {
    static let fullVersion = "com.example.numerology"
    static let handOver = "com.example.numerology.import"

    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        // A first run makes some data, as a user of the lite version would have.
        if application.storage.read("notes") == nil {
            try? application.storage.write("notes", text: "Life path number: 7\nExpression number: 3\nSoul urge number: 5\n")
            say("first run: created 3 notes")
        }
        return true
    }

    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        guard url.host == "export" else {
            say("unknown request \(url); liteapp offers liteapp://export to its full version")
            return false
        }
        guard sourceApplication == Self.fullVersion else {
            say("refusing to export to \(sourceApplication ?? "?"): only the full version (\(Self.fullVersion)) may import this data")
            return false
        }
        let notes = (application.storage.readText("notes") ?? "").split(separator: "\n").map(String.init)
        let json = "{\"source\":\"com.example.numerology-lite\",\"notes\":[" + notes.map { JSONText.quote($0) }.joined(separator: ",") + "]}"
        do {
            try application.pasteboard(named: Self.handOver).copy(
                [PasteboardItem(type: PasteboardType.json, data: Array(json.utf8)),
                 PasteboardItem(type: PasteboardType.plainText, data: Array(notes.map { $0 + "\n" }.joined().utf8))],
                expireSeconds: 300)
        } catch {
            say("could not put the data on the pasteboard: \(error)")
            return false
        }
        say("exported \(notes.count) notes to pasteboard '\(Self.handOver)'; telling the full version")
        application.open("fullapp://import", returningTo: sourceApplication) { outcome in
            if let error = outcome.error { say("could not open fullapp://import: \(error.message)") }
        }
        return true
    }
}

func say(_ text: String) { StandardStreams.output("[liteapp] \(text)\n") }

Application.main(delegate: LiteAppDelegate())
