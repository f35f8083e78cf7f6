import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `RegistryStore` keeps each URL type's `CFBundleURLName` with its schemes (the `urlType`
/// rows, migration v5; before, v3's JSON column), and reads back what it wrote.
@Suite("RegistryStore: URL type names")
struct URLTypesColumnTests {
    func scheme(_ text: String) throws -> URLScheme { try URLScheme(validating: text) }

    @Test("names (any text, or none) and schemes survive a save and a reopen")
    func roundTrip() throws {
        try TemporaryFolder.with { folder in
            let types = [AppBundle.URLType(name: "com.acme.todolist \"quoted\" é/ü", schemes: [try scheme("todolist"), try scheme("todo")]),
                         AppBundle.URLType(name: nil, schemes: [try scheme("plain")])]
            let app = AppBundle(id: "com.acme.todolist", name: "To-do", path: "/apps/todo", executable: "todo",
                                schemes: [try scheme("todolist"), try scheme("todo"), try scheme("plain")], urlTypes: types)
            try RegistryStore(folder: folder).save(app, source: .manual, registeredAt: 42)
            let loaded = try RegistryStore(folder: folder).load().apps
            #expect(loaded.map(\.app) == [app])
            #expect(loaded.first?.registeredAt == 42)
            // Saved again with fewer URL types: the old rows go.
            var fewer = app
            fewer.urlTypes = [types[1]]
            try RegistryStore(folder: folder).save(fewer, source: .manual, registeredAt: 42)
            #expect(try RegistryStore(folder: folder).load().apps.map(\.app) == [fewer])
        }
    }

    @Test("v3's column, read by migration v5: '' (rows before v3) and unreadable text are no URL types; invalid schemes are dropped")
    func column() throws {
        #expect(URLTypesColumn.decode("").isEmpty)
        #expect(URLTypesColumn.decode(nil).isEmpty)
        #expect(URLTypesColumn.decode("not json").isEmpty)
        #expect(URLTypesColumn.decode(#"[{"name": "n", "schemes": ["ok", "bad scheme"]}, {"schemes": ["9bad"]}]"#)
                == [AppBundle.URLType(name: "n", schemes: [try scheme("ok")])])
    }
}
