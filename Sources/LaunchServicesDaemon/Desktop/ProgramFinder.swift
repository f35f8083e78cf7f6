import Foundation
import LaunchServicesCore

/// Answers "is this program installed" as GLib 2.74's `g_find_program_in_path` does: a name
/// with a `/` is that file (relative to the working folder if relative); any other name is
/// looked for in each `PATH` folder in order (an empty component is the working folder; no
/// `PATH` at all means `/bin:/usr/bin:.`). A file counts when it is executable and not a
/// folder — for root, `access` says yes to any file, so an execute bit is required too.
///
/// Thousands of entries name a few hundred programs: each `PATH` folder is listed once and a
/// name is checked only in the folders that hold it (a folder that cannot be listed but can be
/// searched is checked name by name).
struct ProgramFinder {
    /// GLib's search path when `PATH` is unset.
    static let defaultSearchPath = "/bin:/usr/bin:."

    let searchPath: String
    private let folders: [String]
    /// Each folder's names once listed; nil when it could not be listed.
    private var listings: [Int: Set<String>?] = [:]
    private var found: [String: ProgramLookup] = [:]
    private let isRoot = getuid() == 0

    init(path: String?) {
        searchPath = path ?? Self.defaultSearchPath
        folders = searchPath.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    }

    /// Every program looked up so far.
    var lookups: [String: ProgramLookup] { found }

    mutating func find(_ program: String) -> ProgramLookup {
        if let known = found[program] { return known }
        let answer = search(program)
        found[program] = answer
        return answer
    }

    private mutating func search(_ program: String) -> ProgramLookup {
        guard !program.isEmpty else { return .notFound }
        if program.contains("/") {
            return isExecutableFile(program) ? .found(program) : .notFound
        }
        for (index, folder) in folders.enumerated() {
            let candidate = folder.isEmpty ? program : XDGBaseDirectories.join(folder, program)
            if case .some(.some(let names)) = listing(index), !names.contains(program) { continue }
            if isExecutableFile(candidate) { return .found(candidate) }
        }
        return .notFound
    }

    private mutating func listing(_ index: Int) -> Set<String>?? {
        if let known = listings[index] { return .some(known) }
        let folder = folders[index].isEmpty ? "." : folders[index]
        var names: Set<String>?
        if let directory = opendir(folder) {
            var all = Set<String>()
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(validatingCString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if let name { all.insert(name) }
            }
            closedir(directory)
            names = all
        }
        listings[index] = names
        return .some(names)
    }

    /// `g_file_test (IS_EXECUTABLE) && !g_file_test (IS_DIR)`, links followed.
    private func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR, access(path, X_OK) == 0 else { return false }
        return !isRoot || info.st_mode & 0o111 != 0
    }
}
