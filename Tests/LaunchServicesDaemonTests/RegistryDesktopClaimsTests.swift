import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOEmbedded
import Testing

/// The registry's record of the desktop side's claims, and resolution over both kinds with it:
/// whichever kind claimed a scheme first keeps it.
@Suite("Registry service: desktop claims")
struct RegistryDesktopClaimsTests {
    let loop = EmbeddedEventLoop()
    let mail = try! URLScheme(validating: "mailto")

    func service() -> RegistryService {
        RegistryService(loop: loop, logger: Logger(label: "desktop-claims-tests") { _ in SwiftLogNoOpLogHandler() }, folders: [], watchFolders: false,
                        files: .onLoop(loop), wallClock: { 1_000 })
    }

    func choice(_ id: String) -> DesktopChoice {
        DesktopChoice(mimeType: "x-scheme-handler/mailto", candidates: [
            DesktopCandidate(id: id, source: DesktopSource(kind: .mimeType, file: "/usr/share/applications/\(id)", line: 3), verdict: .chosen),
        ])
    }

    @Test("a scheme first handled by desktop entries claims at one issued time; one no longer handled is forgotten")
    func claimsFollowTheHandledSchemes() {
        let registry = service()
        let registered = registry.issueTime()
        registry.register(.simulated("com.mail", schemes: ["https"]), source: .manual, at: registered)
        registry.desktopHandlersChanged(handled: [mail])
        loop.run()
        let first = registry.desktopClaims[mail]
        #expect(first != nil && first! > registered, "issued after the registrations: \(String(describing: first))")
        registry.desktopHandlersChanged(handled: [mail])
        loop.run()
        #expect(registry.desktopClaims[mail] == first, "seen again: the first time stays")
        registry.desktopHandlersChanged(handled: [])
        loop.run()
        #expect(registry.desktopClaims[mail] == nil)
    }

    @Test("a native app registered after the desktop side claimed does not take the scheme; one registered before keeps it")
    func earlierClaimKeeps() {
        let registry = service()
        registry.desktopHandlersChanged(handled: [mail])
        loop.run()
        registry.register(.simulated("com.later.mail", schemes: ["mailto"]), source: .manual, at: registry.issueTime())
        #expect(registry.resolve(mail, desktop: choice("org.example.Mail.desktop"))?.handler.id == "org.example.Mail.desktop")

        let other = service()
        other.register(.simulated("com.early.mail", schemes: ["mailto"]), source: .manual, at: other.issueTime())
        other.desktopHandlersChanged(handled: [mail])
        loop.run()
        #expect(other.resolve(mail, desktop: choice("org.example.Mail.desktop"))?.handler.id == "com.early.mail")
        #expect(other.resolve(mail, desktop: nil)?.handler.id == "com.early.mail")
    }

    @Test("the user's default may name a desktop entry that handles the scheme")
    func desktopDefault() {
        let registry = service()
        registry.register(.simulated("com.early.mail", schemes: ["mailto"]), source: .manual, at: registry.issueTime())
        registry.desktopHandlersChanged(handled: [mail])
        loop.run()
        registry.setDefault("org.example.Mail.desktop", for: mail)
        let resolution = registry.resolve(mail, desktop: choice("org.example.Mail.desktop"))
        #expect(resolution?.handler.id == "org.example.Mail.desktop")
        #expect(resolution?.reason == .userDefault)
    }
}
