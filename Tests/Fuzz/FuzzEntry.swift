#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's entry point: one binary for every target, the target chosen by
/// `LS_FUZZ_TARGET` (scripts/fuzz sets it), so the sources compile once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

extension FuzzTarget {
    /// Read once; an unknown name stops the run before any input, listing the known ones.
    static let selected: FuzzTarget = {
        let name = getenv("LS_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let known = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            fputs("set LS_FUZZ_TARGET to one of: \(known) (got '\(name)')\n", stderr)
            exit(2)
        }
        return target
    }()
}
