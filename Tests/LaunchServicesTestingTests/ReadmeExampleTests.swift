import LaunchServicesApp

final class TodoDelegate: ApplicationDelegate {
    var items: [String] = []
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        if let request = application.callbackRequest(url, sourceApplication: sourceApplication) {
            return application.reply(request, .success([QueryItem(name: "count", value: "\(items.count)")]))
        }
        guard url.host == "add", let title = url.queryValue("title") else { return false }
        items.append(title)
        return true
    }
}

import LaunchServicesTesting
import Testing

@MainActor @Test func todoAddsAndReplies() throws {
    let app = AppDriver(delegate: TodoDelegate(), bundleID: "com.example.todo", schemes: ["todo"])
    let cold = try app.open("todo://add?title=milk")
    #expect(cold.events == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .openURL])
    #expect(try app.open("todo://add?title=eggs").events == [.openURL])
    #expect(try !app.open("todo://remove?title=milk").accepted)
    #expect(app.delegate.items == ["milk", "eggs"])
    try app.open("todo://x-callback-url/count?x-success=notes%3A%2F%2Fdone", from: "com.example.notes")
    #expect(app.callbacks == ["notes://done?count=2"])
    app.terminate()
}
