import LaunchServicesCore
import Testing

/// The registry: registration, the scheme index, and resolution with its reasons.
@Suite("Registry: registration and resolution")
struct RegistryResolutionTests {
    func app(_ id: String, _ schemes: String...) throws -> AppBundle {
        AppBundle(id: id, name: id, path: "/apps/\(id)", executable: "run", schemes: try schemes.map { try URLScheme(validating: $0) })
    }

    func scheme(_ text: String) throws -> URLScheme { try URLScheme(validating: text) }

    /// `com.app00` … `com.app99`.
    func appID(_ i: Int) -> String { "com.app" + (i < 10 ? "0" : "") + String(i) }

    /// `handler(for:)` must always name the same app as `resolve`.
    func expectAgreement(_ registry: Registry, _ schemes: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for text in schemes {
            let s = try scheme(text)
            #expect(registry.handler(for: s)?.id == registry.resolve(s)?.app.id, "scheme \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test("an empty registry resolves nothing")
    func empty() throws {
        let registry = Registry()
        #expect(registry.resolve(try scheme("xyz")) == nil)
        #expect(registry.handler(for: try scheme("xyz")) == nil)
        #expect(registry.apps.isEmpty)
        #expect(registry.claimants.isEmpty)
    }

    @Test("register: the app is stored and indexed under each scheme; only claimant")
    func register() throws {
        var registry = Registry()
        let xyz = try app("com.xyz", "xyz", "xyz-legacy")
        registry.register(xyz)
        #expect(registry.apps["com.xyz"] == xyz)
        #expect(registry.claimants[try scheme("xyz")] == ["com.xyz"])
        #expect(registry.claimants[try scheme("xyz-legacy")] == ["com.xyz"])
        let resolution = try #require(registry.resolve(try scheme("xyz")))
        #expect(resolution.app == xyz)
        #expect(resolution.reason == .onlyClaimant)
        #expect(resolution.claimants == ["com.xyz"])
        #expect(registry.resolve(try scheme("other")) == nil)
        try expectAgreement(registry, ["xyz", "xyz-legacy", "other"])
    }

    @Test("lookup is case-insensitive: schemes are stored lowercased")
    func caseInsensitive() throws {
        var registry = Registry()
        registry.register(try app("com.a", "ToDoList"))
        #expect(registry.resolve(try scheme("todolist"))?.app.id == "com.a")
        #expect(registry.resolve(try scheme("TODOLIST"))?.app.id == "com.a")
    }

    @Test("several claimants: the smallest bundle identifier wins by rule, whatever the order of registration")
    func rule() throws {
        for order in [["com.c", "com.a", "com.b"], ["com.a", "com.b", "com.c"], ["com.b", "com.c", "com.a"]] {
            var registry = Registry()
            for id in order { registry.register(try app(id, "shared", "only-\(id)")) }
            let resolution = try #require(registry.resolve(try scheme("shared")))
            #expect(resolution.app.id == "com.a", "order \(order)")
            #expect(resolution.reason == .rule)
            #expect(resolution.claimants == ["com.a", "com.b", "com.c"])
            #expect(registry.claimants[try scheme("shared")] == ["com.a", "com.b", "com.c"])
            #expect(registry.resolve(try scheme("only-com.b"))?.reason == .onlyClaimant)
            try expectAgreement(registry, ["shared", "only-com.a", "only-com.b", "only-com.c"])
        }
    }

    @Test("the rule compares identifiers as strings, byte by byte")
    func ruleIsLexicographic() throws {
        var registry = Registry()
        registry.register(try app("com.example.b", "s"))
        registry.register(try app("com.example.B", "s"))
        registry.register(try app("com.example.a10", "s"))
        registry.register(try app("com.example.a9", "s"))
        #expect(registry.resolve(try scheme("s"))?.claimants == ["com.example.B", "com.example.a10", "com.example.a9", "com.example.b"])
        #expect(registry.handler(for: try scheme("s"))?.id == "com.example.B")
    }

    @Test("re-registering an app replaces it and withdraws the schemes it no longer claims")
    func replacement() throws {
        var registry = Registry()
        registry.register(try app("com.a", "old", "kept"))
        registry.register(try app("com.b", "kept"))
        let replacement = try app("com.a", "kept", "new")
        registry.register(replacement)
        #expect(registry.apps.count == 2)
        #expect(registry.apps["com.a"] == replacement)
        #expect(registry.claimants[try scheme("old")] == nil, "the withdrawn scheme leaves the index")
        #expect(registry.resolve(try scheme("old")) == nil)
        #expect(registry.claimants[try scheme("kept")] == ["com.a", "com.b"], "no duplicate entry for the re-registered app")
        #expect(registry.claimants[try scheme("new")] == ["com.a"])
        try expectAgreement(registry, ["old", "kept", "new"])
    }

    @Test("unregister returns the app and withdraws its schemes; other claimants stay")
    func unregister() throws {
        var registry = Registry()
        let a = try app("com.a", "shared", "mine")
        registry.register(a)
        registry.register(try app("com.b", "shared"))
        #expect(registry.unregister("com.a") == a)
        #expect(registry.apps["com.a"] == nil)
        #expect(registry.claimants[try scheme("mine")] == nil)
        #expect(registry.claimants[try scheme("shared")] == ["com.b"])
        let resolution = try #require(registry.resolve(try scheme("shared")))
        #expect(resolution.app.id == "com.b")
        #expect(resolution.reason == .onlyClaimant)
        #expect(registry.unregister("com.a") == nil, "a second unregister finds nothing")
        #expect(registry.unregister("com.unknown") == nil)
        #expect(registry.unregister("com.b") != nil)
        #expect(registry.claimants.isEmpty)
        #expect(registry.apps.isEmpty)
    }

    @Test("the user's default beats the rule")
    func userDefault() throws {
        var registry = Registry()
        registry.register(try app("com.a", "shared"))
        registry.register(try app("com.z", "shared"))
        registry.setDefault("com.z", for: try scheme("SHARED"))
        let resolution = try #require(registry.resolve(try scheme("shared")))
        #expect(resolution.app.id == "com.z")
        #expect(resolution.reason == .userDefault)
        #expect(resolution.claimants == ["com.a", "com.z"])
        #expect(registry.defaults[try scheme("shared")] == "com.z")
        try expectAgreement(registry, ["shared"])
    }

    @Test("a default is reported as userDefault even for the only claimant")
    func defaultForOnlyClaimant() throws {
        var registry = Registry()
        registry.register(try app("com.a", "x"))
        registry.setDefault("com.a", for: try scheme("x"))
        #expect(registry.resolve(try scheme("x"))?.reason == .userDefault)
    }

    @Test("a default naming an app that does not claim the scheme is ignored")
    func defaultForNonClaimant() throws {
        var registry = Registry()
        registry.register(try app("com.a", "shared"))
        registry.register(try app("com.b", "shared"))
        registry.register(try app("com.c", "other"))
        registry.setDefault("com.c", for: try scheme("shared"))
        #expect(registry.resolve(try scheme("shared"))?.app.id == "com.a")
        #expect(registry.resolve(try scheme("shared"))?.reason == .rule)
        registry.setDefault("com.nobody", for: try scheme("shared"))
        #expect(registry.resolve(try scheme("shared"))?.reason == .rule)
        try expectAgreement(registry, ["shared", "other"])
    }

    @Test("clearing the default restores the rule; a default outlives its app's unregistration")
    func defaultLifecycle() throws {
        var registry = Registry()
        registry.register(try app("com.a", "shared"))
        registry.register(try app("com.b", "shared"))
        registry.setDefault("com.b", for: try scheme("shared"))
        registry.setDefault(nil, for: try scheme("shared"))
        #expect(registry.defaults.isEmpty)
        #expect(registry.resolve(try scheme("shared"))?.reason == .rule)

        registry.setDefault("com.b", for: try scheme("shared"))
        registry.unregister("com.b")
        #expect(registry.resolve(try scheme("shared"))?.app.id == "com.a")
        #expect(registry.resolve(try scheme("shared"))?.reason == .onlyClaimant)
        try expectAgreement(registry, ["shared"])
        registry.register(try app("com.b", "shared"))
        #expect(registry.resolve(try scheme("shared"))?.app.id == "com.b")
        #expect(registry.resolve(try scheme("shared"))?.reason == .userDefault)
        try expectAgreement(registry, ["shared"])
    }

    @Test("handler(for:) agrees with resolve across a larger mixed registry")
    func agreementAtScale() throws {
        var registry = Registry()
        for i in 0..<60 {
            registry.register(try app(appID(i), "s\(i % 7)", "u\(i)"))
        }
        for i in stride(from: 0, to: 60, by: 5) { registry.unregister(appID(i)) }
        registry.setDefault("com.app13", for: try scheme("s6"))
        registry.setDefault("com.app10", for: try scheme("s3"))
        try expectAgreement(registry, (0..<7).map { "s\($0)" } + (0..<60).map { "u\($0)" })
        #expect(registry.resolve(try scheme("s6"))?.reason == .userDefault)
        #expect(registry.resolve(try scheme("s3"))?.reason == .rule, "com.app10 was unregistered")
        #expect(registry.resolve(try scheme("s3"))?.app.id == "com.app03")
        #expect(registry.resolve(try scheme("u5")) == nil)
    }
}
