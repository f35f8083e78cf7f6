import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The desktop side's claims in `registry.sqlite` (migration v6): the first sight of a
/// desktop handler for a scheme is its claim, kept across restarts; a scheme no desktop entry
/// handles any more is forgotten, so a desktop app installed after that is a newcomer.
@Suite("Registry store: desktop claims")
struct DesktopClaimStoreTests {
    let mail = try! URLScheme(validating: "mailto")
    let web = try! URLScheme(validating: "https")

    @Test("the first time is kept across a reopen; a later sighting does not move it; a gone scheme is forgotten")
    func firstSightKept() throws {
        let folder = try TemporaryFolder(prefix: "ls-desktop-claims")
        defer { _ = folder.remove() }
        var store: RegistryStore? = try RegistryStore(folder: folder.path)
        #expect(try store?.desktopClaims() == [:])
        try store?.updateDesktopClaims(seen: [mail: 100, web: 150], gone: [])
        try store?.updateDesktopClaims(seen: [mail: 900], gone: [])
        #expect(try store?.desktopClaims() == [mail: 100, web: 150])
        // One connection at a time: the store holds its file exclusively until it is released.
        store = nil
        var reopened: RegistryStore? = try RegistryStore(folder: folder.path)
        #expect(try reopened?.desktopClaims() == [mail: 100, web: 150])
        try reopened?.updateDesktopClaims(seen: [:], gone: [web])
        try reopened?.updateDesktopClaims(seen: [web: 700], gone: [])
        #expect(try reopened?.desktopClaims() == [mail: 100, web: 700], "a scheme claimed again after it was gone claims anew")
        reopened = nil
    }
}
