#if canImport(Glibc)
import Glibc
#endif

/// Where a program named in an Exec line (or `$TERMINAL`) is: a name with a `/` is taken as
/// it is; any other name is looked for in each folder of `PATH`, in order, as an executable
/// regular file (what `execvp` would run). A desktop entry's program is looked up again at
/// each launch: it may have been removed since the entry was read.
enum ProgramPath {
    /// PATH when the environment has none (glibc's default for `execvp`).
    static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

    static func find(_ program: String, path: String?) -> String? {
        guard !program.isEmpty else { return nil }
        if program.contains("/") { return program }
        let folders = (path ?? defaultSearchPath).split(separator: ":", omittingEmptySubsequences: false)
        for folder in folders {
            // An empty PATH element is the current folder, which a daemon's is not meant to be.
            guard !folder.isEmpty else { continue }
            let candidate = folder + "/" + program
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
