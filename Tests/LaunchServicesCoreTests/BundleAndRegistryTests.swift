import LaunchServicesCore
import Testing

@Suite("Info.plist validation")
struct BundleValidationTests {
    func plist(id: String? = "com.example.app", executable: String? = "app", types: [InfoPlist.URLType]? = nil, queries: [String]? = nil) -> InfoPlist {
        InfoPlist(bundleIdentifier: id, bundleExecutable: executable, urlTypes: types, queriesSchemes: queries)
    }

    @Test("a valid plist: schemes normalised, de-duplicated, in order; name defaults to the id")
    func valid() throws {
        let app = try AppBundle(validating: plist(types: [
            .init(name: "a", schemes: ["XYZ", "abc"]), .init(name: "b", schemes: ["xyz", "Def"]),
        ], queries: ["Other"]), path: "/apps/a.app")
        #expect(app.id == "com.example.app")
        #expect(app.name == "com.example.app")
        #expect(app.schemes.map(\.normalized) == ["xyz", "abc", "def"])
        #expect(app.queriesSchemes == [try URLScheme(validating: "other")])
        #expect(app.executablePath == "/apps/a.app/app")
    }

    @Test("each bad key refuses the whole bundle, naming the key and the bundle", arguments: [
        ("missing id", "CFBundleIdentifier"), ("empty id", "CFBundleIdentifier"), ("bad id", "CFBundleIdentifier"),
        ("missing executable", "CFBundleExecutable"), ("executable with slash", "CFBundleExecutable"),
        ("type without schemes", "CFBundleURLTypes[1].CFBundleURLSchemes"), ("invalid scheme", "CFBundleURLTypes[0].CFBundleURLSchemes"),
        ("too many queries", "LSApplicationQueriesSchemes"), ("invalid query", "LSApplicationQueriesSchemes"),
    ])
    func refused(label: String, key: String) {
        let good = InfoPlist.URLType(name: "ok", schemes: ["ok"])
        let input: InfoPlist
        switch label {
        case "missing id": input = plist(id: nil)
        case "empty id": input = plist(id: "")
        case "bad id": input = plist(id: "com example")
        case "missing executable": input = plist(executable: nil)
        case "executable with slash": input = plist(executable: "../bin/sh")
        case "type without schemes": input = plist(types: [good, .init(name: "x", schemes: [])])
        case "invalid scheme": input = plist(types: [.init(name: "x", schemes: ["ok", "1bad"])])
        case "too many queries": input = plist(queries: (0...50).map { "s\($0)" })
        default: input = plist(queries: ["good", "bad_one"])
        }
        do {
            _ = try AppBundle(validating: input, path: "/apps/bad.app")
            Issue.record("\(label) was accepted")
        } catch {
            #expect(error.key == key)
            #expect(error.description.contains("/apps/bad.app"))
            #expect(error.description.contains(key))
        }
    }
}

@Suite("Registry and resolution")
struct RegistryTests {
    func app(_ id: String, _ schemes: String...) throws -> AppBundle {
        AppBundle(id: id, name: id, path: "/a/\(id)", executable: "x", schemes: try schemes.map { try URLScheme(validating: $0) })
    }

    @Test("only claimant, then the rule (smallest id), then the user's default")
    func resolutionReasons() throws {
        var r = Registry()
        let s = try URLScheme(validating: "shared")
        try r.register(app("org.zeta", "shared"))
        #expect(r.resolve(s)?.reason == .onlyClaimant)
        try r.register(app("com.alpha", "shared", "other"))
        #expect(r.resolve(s)?.app.id == "com.alpha")
        #expect(r.resolve(s)?.reason == .rule)
        #expect(r.resolve(s)?.claimants == ["com.alpha", "org.zeta"])
        r.setDefault("org.zeta", for: s)
        #expect(r.resolve(s)?.app.id == "org.zeta")
        #expect(r.resolve(s)?.reason == .userDefault)
        #expect(r.handler(for: s)?.id == "org.zeta")
        // A default naming an app that no longer claims the scheme falls back to the rule.
        r.unregister("org.zeta")
        #expect(r.resolve(s)?.app.id == "com.alpha")
        #expect(r.handler(for: s)?.id == "com.alpha")
    }

    @Test("re-registering replaces old schemes; unregistering withdraws them")
    func replaceAndUnregister() throws {
        var r = Registry()
        try r.register(app("a", "one", "two"))
        try r.register(app("a", "two", "three"))
        #expect(r.handler(for: try URLScheme(validating: "one")) == nil)
        #expect(r.handler(for: try URLScheme(validating: "three"))?.id == "a")
        #expect(r.unregister("a")?.id == "a")
        #expect(r.unregister("a") == nil)
        #expect(r.claimants.isEmpty)
        #expect(r.apps.isEmpty)
    }
}
