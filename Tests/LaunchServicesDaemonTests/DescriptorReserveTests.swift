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
