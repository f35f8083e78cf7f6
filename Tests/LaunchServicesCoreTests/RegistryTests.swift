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
        registry.register(xyz, at: 0)
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
        registry.register(try app("com.a", "ToDoList"), at: 0)
        #expect(registry.resolve(try scheme("todolist"))?.app.id == "com.a")
        #expect(registry.resolve(try scheme("TODOLIST"))?.app.id == "com.a")
    }

    @Test("several claimants registered at one instant (one scan): the smallest bundle identifier wins, whatever the order")
    func rule() throws {
        for order in [["com.c", "com.a", "com.b"], ["com.a", "com.b", "com.c"], ["com.b", "com.c", "com.a"]] {
            var registry = Registry()
            for id in order { registry.register(try app(id, "shared", "only-\(id)"), at: 0) }
            let resolution = try #require(registry.resolve(try scheme("shared")))
            #expect(resolution.app.id == "com.a", "order \(order)")
            #expect(resolution.reason == .earliestRegistration)
            #expect(resolution.claimants == ["com.a", "com.b", "com.c"])
            #expect(registry.claimants[try scheme("shared")] == ["com.a", "com.b", "com.c"])
            #expect(registry.resolve(try scheme("only-com.b"))?.reason == .onlyClaimant)
            try expectAgreement(registry, ["shared", "only-com.a", "only-com.b", "only-com.c"])
        }
    }

    @Test("the tie-break compares identifiers as strings, byte by byte")
    func ruleIsLexicographic() throws {
        var registry = Registry()
        registry.register(try app("com.example.b", "s"), at: 0)
        registry.register(try app("com.example.B", "s"), at: 0)
        registry.register(try app("com.example.a10", "s"), at: 0)
        registry.register(try app("com.example.a9", "s"), at: 0)
        #expect(registry.resolve(try scheme("s"))?.claimants == ["com.example.B", "com.example.a10", "com.example.a9", "com.example.b"])
        #expect(registry.handler(for: try scheme("s"))?.id == "com.example.B")
    }

    @Test("re-registering an app replaces it and withdraws the schemes it no longer claims")
    func replacement() throws {
        var registry = Registry()
        registry.register(try app("com.a", "old", "kept"), at: 0)
        registry.register(try app("com.b", "kept"), at: 0)
        let replacement = try app("com.a", "kept", "new")
        registry.register(replacement, at: 0)
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
        registry.register(a, at: 0)
        registry.register(try app("com.b", "shared"), at: 0)
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
        registry.register(try app("com.a", "shared"), at: 0)
        registry.register(try app("com.z", "shared"), at: 0)
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
        registry.register(try app("com.a", "x"), at: 0)
        registry.setDefault("com.a", for: try scheme("x"))
        #expect(registry.resolve(try scheme("x"))?.reason == .userDefault)
    }

    @Test("a default naming an app that does not claim the scheme is ignored")
    func defaultForNonClaimant() throws {
        var registry = Registry()
        registry.register(try app("com.a", "shared"), at: 0)
        registry.register(try app("com.b", "shared"), at: 0)
        registry.register(try app("com.c", "other"), at: 0)
        registry.setDefault("com.c", for: try scheme("shared"))
        #expect(registry.resolve(try scheme("shared"))?.app.id == "com.a")
        #expect(registry.resolve(try scheme("shared"))?.reason == .earliestRegistration)
        registry.setDefault("com.nobody", for: try scheme("shared"))
        #expect(registry.resolve(try scheme("shared"))?.reason == .earliestRegistration)
        try expectAgreement(registry, ["shared", "other"])
    }

    @Test("clearing the default restores the rule; a default outlives its app's unregistration")
    func defaultLifecycle() throws {
        var registry = Registry()
        registry.register(try app("com.a", "shared"), at: 0)
        registry.register(try app("com.b", "shared"), at: 0)
        registry.setDefault("com.b", for: try scheme("shared"))
        registry.setDefault(nil, for: try scheme("shared"))
        #expect(registry.defaults.isEmpty)
        #expect(registry.resolve(try scheme("shared"))?.reason == .earliestRegistration)

        registry.setDefault("com.b", for: try scheme("shared"))
        registry.unregister("com.b")
        #expect(registry.resolve(try scheme("shared"))?.app.id == "com.a")
        #expect(registry.resolve(try scheme("shared"))?.reason == .onlyClaimant)
        try expectAgreement(registry, ["shared"])
        registry.register(try app("com.b", "shared"), at: 0)
        #expect(registry.resolve(try scheme("shared"))?.app.id == "com.b")
        #expect(registry.resolve(try scheme("shared"))?.reason == .userDefault)
        try expectAgreement(registry, ["shared"])
    }

    @Test("handler(for:) agrees with resolve across a larger mixed registry")
    func agreementAtScale() throws {
        var registry = Registry()
        for i in 0..<60 {
            registry.register(try app(appID(i), "s\(i % 7)", "u\(i)"), at: 0)
        }
        for i in stride(from: 0, to: 60, by: 5) { registry.unregister(appID(i)) }
        registry.setDefault("com.app13", for: try scheme("s6"))
        registry.setDefault("com.app10", for: try scheme("s3"))
        try expectAgreement(registry, (0..<7).map { "s\($0)" } + (0..<60).map { "u\($0)" })
        #expect(registry.resolve(try scheme("s6"))?.reason == .userDefault)
        #expect(registry.resolve(try scheme("s3"))?.reason == .earliestRegistration, "com.app10 was unregistered")
        #expect(registry.resolve(try scheme("s3"))?.app.id == "com.app03")
        #expect(registry.resolve(try scheme("u5")) == nil)
    }

    // MARK: The earliest registration keeps a scheme (no silent hijack)

    @Test("a scheme stays with the app registered first when another app claims it later, whatever its id")
    func earliestRegistrationWins() throws {
        var registry = Registry()
        registry.register(try app("com.mail", "mail"), at: 1_000)
        registry.register(try app("aaa.newcomer", "mail"), at: 2_000)
        let resolution = try #require(registry.resolve(try scheme("mail")))
        #expect(resolution.app.id == "com.mail")
        #expect(resolution.reason == .earliestRegistration)
        #expect(resolution.claimants == ["aaa.newcomer", "com.mail"], "claimants stay sorted by id")
        #expect(resolution.claims == [.init(app: "com.mail", since: 1_000), .init(app: "aaa.newcomer", since: 2_000)])
        #expect(registry.claimants[try scheme("mail")] == ["com.mail", "aaa.newcomer"], "the index is in the rule's order")
        #expect(registry.handler(for: try scheme("mail"))?.id == "com.mail")
        try expectAgreement(registry, ["mail"])
    }

    @Test("the rule does not depend on the order apps are loaded in")
    func orderIndependent() throws {
        let times = ["com.c": Int64(5), "com.a": 9, "com.b": 5, "com.d": 1]
        for order in [["com.a", "com.b", "com.c", "com.d"], ["com.d", "com.c", "com.b", "com.a"], ["com.b", "com.a", "com.d", "com.c"]] {
            var registry = Registry()
            for id in order { registry.register(try app(id, "s"), at: times[id]!) }
            #expect(registry.claimants[try scheme("s")] == ["com.d", "com.b", "com.c", "com.a"], "order \(order)")
            #expect(registry.handler(for: try scheme("s"))?.id == "com.d")
        }
    }

    @Test("apps registered at the same instant (one scan) tie-break by the smallest bundle id")
    func sameInstantTiesByID() throws {
        var registry = Registry()
        registry.register(try app("com.z", "s"), at: 7)
        registry.register(try app("com.b", "s"), at: 7)
        registry.register(try app("aaa.later", "s"), at: 8)
        #expect(registry.resolve(try scheme("s"))?.app.id == "com.b")
        #expect(registry.claimants[try scheme("s")] == ["com.b", "com.z", "aaa.later"])
    }

    @Test("the user's default overrides the earliest registration, and clearing it gives the scheme back")
    func defaultOverridesEarliest() throws {
        var registry = Registry()
        registry.register(try app("com.mail", "mail"), at: 1)
        registry.register(try app("aaa.newcomer", "mail"), at: 2)
        registry.setDefault("aaa.newcomer", for: try scheme("mail"))
        #expect(registry.resolve(try scheme("mail"))?.app.id == "aaa.newcomer")
        #expect(registry.resolve(try scheme("mail"))?.reason == .userDefault)
        try expectAgreement(registry, ["mail"])
        registry.setDefault(nil, for: try scheme("mail"))
        #expect(registry.handler(for: try scheme("mail"))?.id == "com.mail")
    }

    @Test("an app unregistered and registered again gets the new time: it no longer holds the scheme")
    func reRegistrationGetsNewTime() throws {
        var registry = Registry()
        registry.register(try app("com.mail", "mail"), at: 1)
        registry.register(try app("com.other", "mail"), at: 2)
        registry.unregister("com.mail")
        registry.register(try app("com.mail", "mail"), at: 3)
        #expect(registry.registeredAt["com.mail"] == 3)
        #expect(registry.registeredAt["com.other"] == 2)
        #expect(registry.handler(for: try scheme("mail"))?.id == "com.other")
        #expect(registry.claimants[try scheme("mail")] == ["com.other", "com.mail"])
        try expectAgreement(registry, ["mail"])
    }

    @Test("an app whose bundle changed (same id, still registered) keeps its time and its schemes")
    func changedBundleKeepsTime() throws {
        var registry = Registry()
        registry.register(try app("com.mail", "mail"), at: 1)
        registry.register(try app("aaa.newcomer", "mail"), at: 2)
        // Rescanned with a changed Info.plist: the time given is ignored for a registered app.
        let changed = try app("com.mail", "mail", "mailto")
        registry.register(changed, at: 99)
        #expect(registry.apps["com.mail"] == changed)
        #expect(registry.registeredAt["com.mail"] == 1)
        #expect(registry.handler(for: try scheme("mail"))?.id == "com.mail")
        #expect(registry.claimants[try scheme("mail")] == ["com.mail", "aaa.newcomer"])
        #expect(registry.resolve(try scheme("mailto"))?.claims == [.init(app: "com.mail", since: 1)])
        // The newcomer changing does not make it older either.
        registry.register(try app("aaa.newcomer", "mail", "news"), at: 0)
        #expect(registry.registeredAt["aaa.newcomer"] == 2)
        #expect(registry.handler(for: try scheme("mail"))?.id == "com.mail")
        try expectAgreement(registry, ["mail", "mailto", "news"])
    }

    @Test("unregistering forgets the time")
    func unregisterForgetsTime() throws {
        var registry = Registry()
        registry.register(try app("com.a", "s"), at: 4)
        registry.unregister("com.a")
        #expect(registry.registeredAt.isEmpty)
        #expect(registry.claims(on: try scheme("s")).isEmpty)
    }
}

/// `Registry(loading:)`, the daemon's one-pass start, must build exactly what registering
/// the same apps one by one builds.
@Suite("Registry: the one-pass load equals registering one by one")
struct RegistryBulkLoadTests {
    @Test("random registrations: same apps, times, claim order and winners", arguments: 0..<20)
    func sameAsOneByOne(seed: Int) throws {
        var generator = SeededGenerator(seed: UInt64(seed) + 1)
        let schemes = try (0..<6).map { try URLScheme(validating: "s\($0)") }
        var registrations: [(app: AppBundle, registeredAt: Int64)] = []
        for _ in 0..<Int.random(in: 1...25, using: &generator) {
            // Few ids, so some repeat (a replaced app keeps its first time); few times, so some tie.
            let id = "app.\(Int.random(in: 0..<12, using: &generator))"
            let claimed = schemes.filter { _ in Bool.random(using: &generator) }
            registrations.append((AppBundle(id: id, name: id, path: "/apps/\(id)", executable: "run", schemes: claimed),
                                  Int64.random(in: 1...4, using: &generator)))
        }
        var oneByOne = Registry()
        for (app, time) in registrations { oneByOne.register(app, at: time) }
        let loaded = Registry(loading: registrations)
        #expect(loaded.apps == oneByOne.apps)
        #expect(loaded.registeredAt == oneByOne.registeredAt)
        #expect(loaded.claimants == oneByOne.claimants)
        for scheme in schemes { #expect(loaded.resolve(scheme) == oneByOne.resolve(scheme)) }
    }
}
