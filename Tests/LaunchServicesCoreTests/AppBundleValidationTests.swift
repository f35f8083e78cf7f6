import LaunchServicesCore
import Testing

/// `AppBundle(validating:path:)`: all-or-nothing validation of a decoded Info.plist, each
/// refusal naming the key and the bundle.
@Suite("AppBundle: Info.plist validation")
struct AppBundleValidationRuleTests {
    static let path = "/apps/Example.app"

    func plist(
        id: String? = "com.example.app", name: String? = nil, executable: String? = "example",
        types: [InfoPlist.URLType]? = nil, queries: [String]? = nil
    ) -> InfoPlist {
        InfoPlist(bundleIdentifier: id, bundleName: name, bundleExecutable: executable, urlTypes: types, queriesSchemes: queries)
    }

    func type(_ schemes: [String]?, name: String? = "n") -> InfoPlist.URLType {
        InfoPlist.URLType(name: name, schemes: schemes)
    }

    /// The refusal for `plist`, or `nil` when it validates.
    func refusal(_ plist: InfoPlist, path: String = Self.path) -> BundleError? {
        do {
            _ = try AppBundle(validating: plist, path: path)
            return nil
        } catch {
            return error
        }
    }

    /// Checks that the refusal names `key` and the bundle path, in its fields and its description.
    func expectRefused(_ plist: InfoPlist, key: String, mentioning: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error = refusal(plist) else {
            Issue.record("expected a refusal naming \(key)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.key == key, sourceLocation: sourceLocation)
        #expect(error.path == Self.path, sourceLocation: sourceLocation)
        #expect(error.description.hasPrefix("bundle \(Self.path): \(key) "), "\(error)", sourceLocation: sourceLocation)
        if let mentioning {
            #expect(error.problem.contains(mentioning), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("a valid plist: every field, schemes normalised and in declaration order")
    func valid() throws {
        let app = try AppBundle(validating: plist(
            id: "com.Example.App-1_x", name: "Example", executable: "example",
            types: [type(["XYZ", "todolist"]), type(["Zeta", "xyz"], name: nil)],
            queries: ["Mailto", "tel"]), path: Self.path)
        #expect(app.id == "com.Example.App-1_x", "the identifier keeps its case")
        #expect(app.name == "Example")
        #expect(app.path == Self.path)
        #expect(app.executable == "example")
        #expect(app.executablePath == "/apps/Example.app/example")
        #expect(app.schemes.map(\.normalized) == ["xyz", "todolist", "zeta"])
        #expect(app.queriesSchemes == Set(try ["mailto", "tel"].map { try URLScheme(validating: $0) }))
    }

    @Test("the name defaults to the identifier; no URL types means no schemes")
    func defaults() throws {
        let app = try AppBundle(validating: plist(), path: Self.path)
        #expect(app.name == "com.example.app")
        #expect(app.schemes.isEmpty)
        #expect(app.queriesSchemes.isEmpty)
        #expect(try AppBundle(validating: plist(types: []), path: Self.path).schemes.isEmpty)
    }

    @Test("executablePath joins with exactly one '/'")
    func executablePath() {
        let slash = AppBundle(id: "a", name: "a", path: "/apps/A.app/", executable: "run", schemes: [])
        #expect(slash.executablePath == "/apps/A.app/run")
        let noSlash = AppBundle(id: "a", name: "a", path: "/apps/A.app", executable: "run", schemes: [])
        #expect(noSlash.executablePath == "/apps/A.app/run")
    }

    @Test("duplicate schemes, in any case and across URL types, collapse to the first")
    func duplicates() throws {
        let app = try AppBundle(validating: plist(types: [type(["xyz", "XYZ", "abc"]), type(["Abc", "xYz", "new"])]), path: Self.path)
        #expect(app.schemes.map(\.normalized) == ["xyz", "abc", "new"])
        let queries = try AppBundle(validating: plist(queries: ["tel", "TEL", "Tel"]), path: Self.path)
        #expect(queries.queriesSchemes.map(\.normalized) == ["tel"])
    }

    @Test("a missing or empty CFBundleIdentifier is refused")
    func missingIdentifier() {
        expectRefused(plist(id: nil), key: "CFBundleIdentifier", mentioning: "missing or empty")
        expectRefused(plist(id: ""), key: "CFBundleIdentifier", mentioning: "missing or empty")
    }

    @Test("an identifier with other characters than letters, digits, '-', '.', '_' is refused, quoting it", arguments: [
        "com.example app", "com/example", "com.exämple", "com:example", "com.example!", "com.example\n",
    ])
    func badIdentifier(id: String) {
        expectRefused(plist(id: id), key: "CFBundleIdentifier", mentioning: "'\(id)'")
    }

    @Test("a missing or empty CFBundleExecutable is refused")
    func missingExecutable() {
        expectRefused(plist(executable: nil), key: "CFBundleExecutable", mentioning: "missing or empty")
        expectRefused(plist(executable: ""), key: "CFBundleExecutable", mentioning: "missing or empty")
    }

    @Test("an executable that is not a plain file name inside the bundle is refused", arguments: [
        "bin/app", "/usr/bin/env", "../escape", ".", "..", "app/",
    ])
    func executableWithSlash(executable: String) {
        expectRefused(plist(executable: executable), key: "CFBundleExecutable", mentioning: "'\(executable)'")
    }

    @Test("a URL type without schemes is refused, naming its index")
    func typeWithoutSchemes() {
        expectRefused(plist(types: [type(["ok"]), type(nil)]), key: "CFBundleURLTypes[1].CFBundleURLSchemes", mentioning: "missing or empty")
        expectRefused(plist(types: [type([])]), key: "CFBundleURLTypes[0].CFBundleURLSchemes", mentioning: "missing or empty")
    }

    @Test("an invalid scheme is refused, naming CFBundleURLTypes[i].CFBundleURLSchemes and quoting the scheme")
    func invalidScheme() throws {
        expectRefused(plist(types: [type(["good"]), type(["fine"]), type(["also", "1bad"])]),
                      key: "CFBundleURLTypes[2].CFBundleURLSchemes", mentioning: "'1bad'")
        expectRefused(plist(types: [type(["my_app"])]), key: "CFBundleURLTypes[0].CFBundleURLSchemes", mentioning: "'my_app'")
        expectRefused(plist(types: [type([""])]), key: "CFBundleURLTypes[0].CFBundleURLSchemes", mentioning: "empty")
        let error = try #require(refusal(plist(types: [type(["my_app"])])))
        #expect(error.problem == SchemeError.invalidCharacter("my_app", "_").description)
    }

    @Test("at most 50 LSApplicationQueriesSchemes")
    func queriesLimit() throws {
        #expect(AppBundle.maximumQueriesSchemes == 50)
        let fifty = (0..<50).map { "q\($0)" }
        let app = try AppBundle(validating: plist(queries: fifty), path: Self.path)
        #expect(app.queriesSchemes.count == 50)
        expectRefused(plist(queries: fifty + ["q50"]), key: "LSApplicationQueriesSchemes", mentioning: "lists 51 schemes; at most 50")
    }

    @Test("an invalid query scheme is refused, naming LSApplicationQueriesSchemes")
    func invalidQueryScheme() {
        expectRefused(plist(queries: ["tel", "no spaces"]), key: "LSApplicationQueriesSchemes", mentioning: "'no spaces'")
    }

    @Test("all or nothing: the first bad key refuses the whole bundle, in a fixed order")
    func order() {
        // Identifier before executable before URL types before queries.
        #expect(refusal(plist(id: nil, executable: nil, types: [type(nil)]))?.key == "CFBundleIdentifier")
        #expect(refusal(plist(executable: nil, types: [type(nil)]))?.key == "CFBundleExecutable")
        #expect(refusal(plist(types: [type(nil)], queries: ["1"]))?.key == "CFBundleURLTypes[0].CFBundleURLSchemes")
    }

    @Test("CFBundleURLName: each URL type keeps its name and its own schemes, in declaration order")
    func urlNames() throws {
        let app = try AppBundle(validating: plist(types: [type(["Todo", "todolist", "TODO"], name: "com.acme.todolist"),
                                                          type(["xyz", "todo"], name: "com.acme.xyz"), type(["plain"], name: nil)]),
                                path: Self.path)
        #expect(app.urlTypes.map(\.name) == ["com.acme.todolist", "com.acme.xyz", nil])
        #expect(app.urlTypes.map { $0.schemes.map(\.normalized) } == [["todo", "todolist"], ["xyz", "todo"], ["plain"]])
        #expect(app.schemes.map(\.normalized) == ["todo", "todolist", "xyz", "plain"])
        #expect(app.kind(of: try URLScheme(validating: "TODO")) == "com.acme.todolist", "the first URL type declaring a scheme names its kind")
        #expect(app.kind(of: try URLScheme(validating: "xyz")) == "com.acme.xyz")
        #expect(app.kind(of: try URLScheme(validating: "plain")) == nil, "an unnamed URL type has no kind")
        #expect(app.kind(of: try URLScheme(validating: "other")) == nil)
    }

    @Test("CFBundleURLName absent: the URL type has no name, and no URL types means none")
    func urlNameAbsent() throws {
        let app = try AppBundle(validating: plist(types: [type(["xyz"], name: nil)]), path: Self.path)
        #expect(app.urlTypes == [AppBundle.URLType(name: nil, schemes: [try URLScheme(validating: "xyz")])])
        #expect(try AppBundle(validating: plist(), path: Self.path).urlTypes.isEmpty)
    }

    @Test("a bad CFBundleURLName refuses the whole bundle, naming the URL type's key", arguments: [
        ("", "is empty"),
        ("com.acme\ntodo", "control character"),
        ("com.acme\u{7F}", "control character"),
        (String(repeating: "a", count: 256), "256 bytes long; at most 255"),
    ])
    func badURLName(name: String, mentioning: String) {
        expectRefused(plist(types: [type(["good"], name: "com.acme.good"), type(["other"], name: name)]),
                      key: "CFBundleURLTypes[1].CFBundleURLName", mentioning: mentioning)
    }

    @Test("a CFBundleURLName of 255 bytes is accepted")
    func longestURLName() throws {
        let name = String(repeating: "é", count: 127) + "a"
        #expect(name.utf8.count == 255)
        #expect(try AppBundle(validating: plist(types: [type(["x"], name: name)]), path: Self.path).urlTypes.first?.name == name)
    }

    @Test("the error's description: with and without a key")
    func errorDescription() {
        #expect(BundleError(path: "/a", key: "K", problem: "is bad").description == "bundle /a: K is bad")
        #expect(BundleError(path: "/a", key: nil, problem: "has no Info.plist").description == "bundle /a: has no Info.plist")
    }
}
