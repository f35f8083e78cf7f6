import ArgumentParser
import CLaunchServicesShim
import Foundation

/// What this machine charges for the two things every open path is made of, measured in the
/// same run as the rows they explain: waking the process at the other end of a socket on the
/// same CPU against on another CPU, and a page's first touch. On a virtual machine both can
/// be many times their cost on hardware (a wake-up on an idle virtual CPU exits to the host
/// unless the guest polls before halting), and they move from run to run with the host's
/// load, which is why a row's ratio to a peer moves with them.
enum MachineCosts {
    /// Pages touched per page-fault sample.
    static let pagesPerSample = 256

    static func rows(_ report: Report, binary: String, count: Int, baseline: Row) throws {
        var mask = [UInt8](repeating: 0, count: Int(LS_CPU_MASK_BYTES))
        let first = ls_affinity_get(0, &mask) == 0 ? ls_affinity_nth(mask, 0) : -1
        let second = first >= 0 ? ls_affinity_nth(mask, 1) : -1
        if first >= 0 {
            report.row("round trip, socketpair, both ends pinned to one CPU", try Echo.measure(binary: binary, count: count, cpus: (first, first)), baseline: baseline)
        }
        if second >= 0 {
            report.row("round trip, socketpair, ends pinned to two CPUs", try Echo.measure(binary: binary, count: count, cpus: (first, second)), baseline: baseline)
        } else {
            report.note("round trip on two CPUs: skipped (this process may run on one CPU only)")
        }
        report.row("first write to an anonymous page, per page (\(pagesPerSample) a sample)", try pageFaults(samples: max(count / 10, 30)))
        if let polling = try? String(contentsOfFile: "/sys/module/haltpoll/parameters/guest_halt_poll_ns", encoding: .utf8) {
            report.note("guest halt polling (/sys/module/haltpoll/parameters/guest_halt_poll_ns): \(polling.trimmingCharacters(in: .whitespacesAndNewlines)) ns; 0 means an idle virtual CPU halts at once, so waking a process there exits to the host")
        }
    }

    /// Nanoseconds per page of writing one byte into each page of a fresh anonymous mapping.
    static func pageFaults(samples: Int) throws -> [UInt64] {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = page * pagesPerSample
        return try (0..<samples).map { _ in
            guard let mapping = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapping != MAP_FAILED else {
                throw ValidationError("mmap of \(length) bytes failed: \(String(cString: strerror(errno)))")
            }
            defer { munmap(mapping, length) }
            let bytes = mapping.assumingMemoryBound(to: UInt8.self)
            let start = DispatchTime.now().uptimeNanoseconds
            for offset in stride(from: 0, to: length, by: page) { bytes[offset] = 1 }
            return (DispatchTime.now().uptimeNanoseconds - start) / UInt64(pagesPerSample)
        }
    }
}
