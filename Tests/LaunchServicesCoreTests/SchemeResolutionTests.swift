import LaunchServicesCore
import Testing

/// The one rule over native apps and desktop entries: the user's default, else the earliest
/// claim across both kinds (a tie to the native app).
@Suite("Scheme resolution over native apps and desktop entries")
struct SchemeResolutionTests {
    let mail = try! URLScheme(validating: "mailto")

    func app(_ id: String, _ schemes: String...) throws -> AppBundle {
        AppBundle(id: id, name: id, path: "/apps/\(id)", executable: "run", schemes: try schemes.map { try URLScheme(validating: $0) })
    }

    func candidate(_ id: String, _ verdict: DesktopCandidate.Verdict = .chosen) -> DesktopCandidate {
        DesktopCandidate(id: id, source: DesktopSource(kind: .defaultApplications, file: "/home/u/.config/mimeapps.list", shownFile: "~/.config/mimeapps.list", line: 2),
                         verdict: verdict)
    }

    func registry(_ apps: [(AppBundle, Int64)], defaults: [String: String] = [:]) throws -> Registry {
        var registry = Registry()
        for (app, time) in apps { registry.register(app, at: time) }
        for (scheme, id) in defaults { registry.setDefault(id, for: try URLScheme(validating: scheme)) }
        return registry
    }

    @Test("only a native claimant: it opens, as the registry alone would")
    func nativeOnly() throws {
        let registry = try registry([(app("com.mail", "mailto"), 100)])
        let resolution = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: nil, now: 500))
        #expect(resolution.handler.id == "com.mail")
        #expect(resolution.reason == .onlyClaimant)
        #expect(resolution.claims == [.init(kind: .native, id: "com.mail", since: 100)])
    }

    @Test("only a desktop entry: it opens, claiming now when it has no time yet")
    func desktopOnly() throws {
        let side = SchemeResolution.DesktopSide(chosen: candidate("org.example.Mail.desktop"), since: nil)
        let resolution = try #require(SchemeResolution.resolve(mail, registry: Registry(), desktop: side, now: 500))
        #expect(resolution.handler == .desktop(candidate("org.example.Mail.desktop")))
        #expect(resolution.handler.kind == .desktop)
        #expect(resolution.reason == .onlyClaimant)
        #expect(resolution.claims == [.init(kind: .desktop, id: "org.example.Mail.desktop", since: 500)])
    }

    @Test("no handler of either kind: nil")
    func none() {
        #expect(SchemeResolution.resolve(mail, registry: Registry(), desktop: SchemeResolution.DesktopSide(chosen: nil, since: 10), now: 500) == nil)
    }

    @Test("the earlier claim wins across kinds: a native app installed after the desktop side does not take the scheme, nor the reverse")
    func earliestAcrossKinds() throws {
        let registry = try registry([(app("com.mail", "mailto"), 200)])
        let earlierDesktop = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: .init(chosen: candidate("d.desktop"), since: 100), now: 500))
        #expect(earlierDesktop.handler.id == "d.desktop")
        #expect(earlierDesktop.reason == .earliestRegistration)
        #expect(earlierDesktop.claims.map(\.id) == ["d.desktop", "com.mail"])
        let laterDesktop = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: .init(chosen: candidate("d.desktop"), since: 300), now: 500))
        #expect(laterDesktop.handler.id == "com.mail")
        #expect(laterDesktop.claims.map(\.id) == ["com.mail", "d.desktop"])
        let firstSeenNow = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: .init(chosen: candidate("d.desktop"), since: nil), now: 500))
        #expect(firstSeenNow.handler.id == "com.mail", "a desktop side seen for the first time claims now, after the native app")
    }

    @Test("a tie goes to the native app")
    func tieToNative() throws {
        let registry = try registry([(app("zzz.mail", "mailto"), 100)])
        let resolution = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: .init(chosen: candidate("aaa.desktop"), since: 100), now: 500))
        #expect(resolution.handler.id == "zzz.mail")
        #expect(resolution.claims.map(\.kind) == [.native, .desktop])
    }

    @Test("the user's default naming a native claimant wins over an earlier desktop side")
    func nativeDefault() throws {
        let registry = try registry([(app("com.mail", "mailto"), 200)], defaults: ["mailto": "com.mail"])
        let resolution = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: .init(chosen: candidate("d.desktop"), since: 100), now: 500))
        #expect(resolution.handler.id == "com.mail")
        #expect(resolution.reason == .userDefault)
    }

    @Test("the user's default naming a usable desktop entry wins, even one the desktop rules ranked lower")
    func desktopDefault() throws {
        let registry = try registry([(app("com.mail", "mailto"), 100)], defaults: ["mailto": "other.desktop"])
        let named = candidate("other.desktop", .lost(.outranked(by: "d.desktop")))
        let side = SchemeResolution.DesktopSide(chosen: candidate("d.desktop"), since: 200, userDefault: named)
        let resolution = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: side, now: 500))
        #expect(resolution.handler == .desktop(named))
        #expect(resolution.reason == .userDefault)
    }

    @Test("a default that names no usable handler of either kind is passed over: the earliest claim wins")
    func staleDefault() throws {
        let registry = try registry([(app("com.mail", "mailto"), 100), (app("com.other", "https"), 50)], defaults: ["mailto": "com.other"])
        let resolution = try #require(SchemeResolution.resolve(mail, registry: registry, desktop: .init(chosen: candidate("d.desktop"), since: 200), now: 500))
        #expect(resolution.handler.id == "com.mail")
        #expect(resolution.reason == .earliestRegistration)
        let desktopNamed = try self.registry([(app("com.mail", "mailto"), 100)], defaults: ["mailto": "gone.desktop"])
        let side = SchemeResolution.DesktopSide(chosen: candidate("d.desktop"), since: 200, userDefault: nil)
        #expect(SchemeResolution.resolve(mail, registry: desktopNamed, desktop: side, now: 500)?.handler.id == "com.mail")
    }

    @Test("usable: the chosen entry and those outranked by it; not a removed, hidden, uninstalled or missing one")
    func usable() {
        let removedBy = DesktopSource(kind: .removedAssociations, file: "/m", line: 4)
        let choice = DesktopChoice(mimeType: "x-scheme-handler/mailto", candidates: [
            candidate("a.desktop"),
            candidate("b.desktop", .lost(.outranked(by: "a.desktop"))),
            candidate("c.desktop", .lost(.removed(by: removedBy))),
            candidate("d.desktop", .lost(.defect(.hidden(line: 3)))),
            candidate("e.desktop", .lost(.noSuchEntry)),
        ])
        #expect(choice.usable("a.desktop")?.verdict == .chosen)
        #expect(choice.usable("b.desktop") != nil)
        #expect(choice.usable("c.desktop") == nil)
        #expect(choice.usable("d.desktop") == nil)
        #expect(choice.usable("e.desktop") == nil)
        #expect(choice.usable("f.desktop") == nil)
    }
}
