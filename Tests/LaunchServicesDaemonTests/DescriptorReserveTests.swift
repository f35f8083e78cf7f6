#if canImport(Glibc)
import Glibc
#endif
@testable import LaunchServicesDaemon
import Testing

/// `DescriptorReserve`: descriptors held back, freed around a call that must open one.
@Suite("Descriptor reserve")
struct DescriptorReserveTests {
    @Test("it holds its descriptors, frees them for the body, and takes them back after")
    func releasedAroundTheBody() {
        let reserve = DescriptorReserve(size: 2)
        #expect(reserve.count == 2)
        let inside = reserve.withReleased { reserve.count }
        #expect(inside == 0)
        #expect(reserve.count == 2)
    }

    @Test("at the descriptor limit (a child process with RLIMIT_NOFILE lowered) a released descriptor is the next open's, and is taken back after")
    func releasedDescriptorIsUsable() throws {
        // Each step of the child exits with its own status when it fails.
        let steps: [Int32: String] = [
            10: "the reserve holds no descriptor under the lowered limit",
            11: "filling the descriptor table did not end in EMFILE",
            12: "an open succeeded with the table full",
            13: "the open inside withReleased failed: the released descriptor was not free",
            14: "the reserve was not refilled after withReleased",
            15: "an open succeeded after the refill: the reserve did not take its descriptor back",
            16: "retryingAtLimit did not get a descriptor on its second try",
            17: "the reserve was not refilled after retryingAtLimit",
            18: "the open after releaseOne failed",
        ]
        // The same calls once here, so the child runs code the runtime has already resolved
        // (a forked child of a multithreaded process should take no runtime locks).
        let warm = DescriptorReserve(size: 1)
        _ = warm.withReleased { () -> Bool in true }
        _ = warm.retryingAtLimit { () -> Int32 in 0 } outOfDescriptors: { $0 == EMFILE }
        _ = warm.releaseOne()
        let status = try #require(ForkedChild.run(descriptorLimit: 64, Self.reserveAtTheLimit), "the child did not end within its deadline")
        #expect(status == 0, "\(steps[status] ?? "exit status \(status)")")
    }

    /// Run in the child: fills the descriptor table, then opens through the reserve.
    static func reserveAtTheLimit() -> Int32 {
        // The child inherits every descriptor the test process held at the fork, and tests
        // run in parallel: their sockets could take the 64 slots before the reserve does (it
        // then found none, now and then). None of them is needed here.
        for fd in Int32(3)..<64 { close(fd) }
        let open = { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }
        let reserve = DescriptorReserve(size: 1)
        guard reserve.count == 1 else { return 10 }
        var taken: [Int32] = []
        taken.reserveCapacity(64)
        defer { taken.forEach { close($0) } }
        for _ in 0..<64 {
            let fd = open()
            guard fd >= 0 else { break }
            taken.append(fd)
        }
        guard errno == EMFILE else { return 11 }
        guard open() < 0 else { return 12 }
        let inside = reserve.withReleased { () -> Bool in
            let fd = open()
            if fd >= 0 { close(fd) }
            return fd >= 0
        }
        guard inside else { return 13 }
        guard reserve.count == 1 else { return 14 }
        guard open() < 0 else { return 15 }
        var tries = 0
        let retried = reserve.retryingAtLimit { () -> Int32 in
            tries += 1
            let fd = open()
            if fd >= 0 { close(fd) }
            return fd >= 0 ? 0 : errno
        } outOfDescriptors: { $0 == EMFILE }
        guard retried == 0, tries == 2 else { return 16 }
        guard reserve.count == 1 else { return 17 }
        guard reserve.releaseOne() else { return 18 }
        let kept = open()
        guard kept >= 0 else { return 18 }
        close(kept)
        return 0
    }

    @Test("one given up for longer is taken back by refill")
    func releaseOneAndRefill() {
        let reserve = DescriptorReserve(size: 1)
        #expect(reserve.releaseOne())
        #expect(reserve.count == 0)
        #expect(!reserve.releaseOne(), "none left to give")
        reserve.refill()
        #expect(reserve.count == 1)
    }
}

/// What systemd hears at the descriptor limit: a notification is sent with the reserve
/// released only when it failed for want of a descriptor.
@Suite("Service manager notifications and the descriptor reserve")
struct ServiceManagerReserveTests {
    @Test("far from the limit a notification is sent once with the reserve held: no other thread can take its descriptors meanwhile")
    func reserveKeptWhenNotNeeded() {
        let reserve = DescriptorReserve(size: 1)
        var heldAtEachSend: [Int] = []
        let sent = ServiceManagerStatus.notify("WATCHDOG=1", reserve: reserve) { _ in
            heldAtEachSend.append(reserve.count)
            return 1
        }
        #expect(sent)
        #expect(heldAtEachSend == [1])
        #expect(reserve.count == 1)
    }

    @Test("a notification that failed with EMFILE or ENFILE is sent again with the reserve released, which is taken back after")
    func retriedWithTheReserveReleased() {
        for failure in [EMFILE, ENFILE] {
            let reserve = DescriptorReserve(size: 1)
            var heldAtEachSend: [Int] = []
            let sent = ServiceManagerStatus.notify("WATCHDOG=1", reserve: reserve) { _ in
                heldAtEachSend.append(reserve.count)
                return reserve.count == 0 ? 1 : -failure
            }
            #expect(sent)
            #expect(heldAtEachSend == [1, 0])
            #expect(reserve.count == 1)
        }
    }

    @Test("any other failure (no manager listening) is not retried and leaves the reserve alone")
    func otherFailuresNotRetried() {
        let reserve = DescriptorReserve(size: 1)
        var sends = 0
        let sent = ServiceManagerStatus.notify("WATCHDOG=1", reserve: reserve) { _ in
            sends += 1
            return -ECONNREFUSED
        }
        #expect(!sent)
        #expect(sends == 1)
        #expect(reserve.count == 1)
    }
}
