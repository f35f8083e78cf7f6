import LaunchServicesCore
@testable import LaunchServicesDaemon
import Testing

/// At start the daemon rewrites the saved folder registrations only when the scan found
/// something else (`RegistryService.same`): any changed app, time, or member must count.
@Suite("RegistryService: saved folder registrations compared with the scan")
struct FolderRegistrationsTests {
    func app(_ id: String, _ schemes: [String] = ["s"], path: String? = nil) throws -> AppBundle {
        AppBundle(id: id, name: id, path: path ?? "/apps/\(id).app", executable: "run", schemes: try schemes.map { try URLScheme(validating: $0) })
    }

    @Test("the same apps and times, in another order, are the same")
    func sameInAnyOrder() throws {
        let a = [(app: try app("a"), registeredAt: Int64(1)), (app: try app("b"), registeredAt: Int64(2))]
        #expect(RegistryService.same(a, a.reversed()))
        #expect(RegistryService.same([], []))
    }

    @Test("a changed time, a changed bundle, a missing or an extra app is a change")
    func anyDifference() throws {
        let a = [(app: try app("a"), registeredAt: Int64(1)), (app: try app("b"), registeredAt: Int64(2))]
        #expect(!RegistryService.same(a, [a[0], (app: a[1].app, registeredAt: Int64(3))]))
        #expect(!RegistryService.same(a, [a[0], (app: try app("b", ["t"]), registeredAt: Int64(2))]))
        #expect(!RegistryService.same(a, [a[0], (app: try app("b", path: "/elsewhere/b.app"), registeredAt: Int64(2))]))
        #expect(!RegistryService.same(a, [a[0]]))
        #expect(!RegistryService.same([a[0]], a))
        #expect(!RegistryService.same([a[0], a[0]], a))
    }
}
