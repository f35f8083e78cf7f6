import Foundation
import LaunchServicesTesting
import Testing

/// The testing kit's `UserManagerLease`: one holder at a time (another in this process waits,
/// bounded), and `/run/systemd/system` there while it is held.
@Suite("UserManagerLease: one private user manager at a time")
struct UserManagerLeaseTests {
    @Test("a second lease waits while the first is held (and gives up by name at its deadline); after release it is granted; the marker exists while held")
    func exclusive() throws {
        let first = try UserManagerLease()
        var released = false
        defer { if !released { first.release() } }
        #expect(FileManager.default.fileExists(atPath: UserManagerLease.marker))
        #expect(throws: ProcessError.self) { _ = try UserManagerLease(within: 0.3) }
        first.release()
        first.release()  // a second release does nothing (and closes no other descriptor)
        released = true
        let second = try UserManagerLease(within: 600)
        #expect(FileManager.default.fileExists(atPath: UserManagerLease.marker))
        second.release()
    }
}
