import Foundation

/// What the system said when a file could not be read, sorted by what it tells about the file.
///
/// Only a few answers say the file is not there, or is not what was looked for: the path
/// names nothing (`ENOENT`), goes through a file that is not a folder (`ENOTDIR`), loops on
/// symbolic links or is too long (`ELOOP`, `ENAMETOOLONG`). That is the user's doing, and a
/// scan acts on it (a bundle gone is withdrawn). Every other failure — out of descriptors
/// (`EMFILE`, `ENFILE`) or memory, an I/O error, an interrupted call, permissions — says
/// only that the file could not be read now: no evidence about it, so nothing is withdrawn
/// or changed because of it, and the scan is retried. Permissions count among these: a
/// folder the daemon may not list has not lost its bundles, and withdrawing them would lose
/// their registration times; to withdraw an app, remove its bundle or `lsctl unregister` it.
enum ReadFailure {
    /// Whether `code` says the path is not there (or not a folder / a file where one was looked for).
    static func isAbsence(_ code: Int32) -> Bool {
        code == ENOENT || code == ENOTDIR || code == ELOOP || code == ENAMETOOLONG
    }

    /// The system's words for `code`, e.g. `Too many open files`.
    static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// The entries of one apps folder, read with `opendir`/`readdir` so a failure keeps its
/// `errno` (`FileManager.contentsOfDirectory` made every failure an empty folder).
enum FolderListing: Equatable {
    /// Every entry's name, unsorted (`.` and `..` left out).
    case entries([String])
    /// Not there, or not a folder: nothing in it.
    case absent
    /// Could not be read now (`ReadFailure`): nothing is known about what it holds.
    case unreadable(Int32)

    static func read(_ folder: String) -> FolderListing {
        var info = stat()
        guard stat(folder, &info) == 0 else { return failure(errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { return .absent }
        guard let directory = opendir(folder) else { return failure(errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                // The end of the folder, or (errno set) a failure part way through.
                return errno == 0 ? .entries(names) : failure(errno)
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(validatingCString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            // A name that is not UTF-8 cannot be opened by a path String: no bundle of ours.
            guard let name, name != ".", name != ".." else { continue }
            names.append(name)
        }
    }

    private static func failure(_ code: Int32) -> FolderListing {
        ReadFailure.isAbsence(code) ? .absent : .unreadable(code)
    }
}
