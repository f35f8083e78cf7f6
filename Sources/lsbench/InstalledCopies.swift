import ArgumentParser
import Foundation

/// The bench runs copies of the built executables, written the way an installer writes them
/// (`install`, `cp`, `strip`: large writes), not the linker's own output files.
///
/// On this VM (Linux 6.18, ext4) a process starts faster from a file written in large
/// writes (most likely: the page cache then holds it in large folios, and mapping it takes
/// less work per page); the linker writes its output through a shared mapping, page by
/// page, and the same 21 MB static `xyz` then
/// started 250–400 µs slower (`posix_spawn` to reaped exit, 300 runs: 0.83–1.14 ms against
/// 0.63–0.85 ms for a `cp` of it; 4 KiB writes as slow as the linker's file, 1 MiB writes as
/// fast as `cp`). Every row that starts one of the project's programs (the app's start, the
/// cold open, `lsopen`, the daemon) would otherwise time the state a binary is in only
/// between a build and its install, while the peers' programs are installed files.
enum InstalledCopies {
    /// The project's executables the bench starts.
    static let names = ["launchservicesd", "lsopen", "lsctl", "xyz", "wordrev", "lstestapp"]

    /// Copies each of `names` found in `binDir` into `folder` (created) and returns `folder`.
    static func install(from binDir: String, into folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in names where FileManager.default.isExecutableFile(atPath: binDir + "/" + name) {
            try copy(binDir + "/" + name, to: folder + "/" + name)
        }
        return folder
    }

    /// `source` to `destination` (mode 0755) in writes of 1 MiB.
    static func copy(_ source: String, to destination: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        let fd = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw ValidationError("cannot create \(destination): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let chunk = 1 << 20
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, min(chunk, bytes.count - offset))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw ValidationError("cannot write \(destination): \(String(cString: strerror(errno)))") }
                offset += n
            }
        }
    }
}
