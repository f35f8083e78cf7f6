import Foundation
import LaunchServicesCore

/// Where a bundle and its executable really are, for `BundleLoader`.
///
/// A bundle's path is made canonical so one bundle has one path (a registration by a
/// symbolic link or with `..` is the same bundle as one by its real path), and the executable
/// must resolve to a file inside that path: a `CFBundleExecutable` that is a symbolic link
/// out of the bundle would let a bundle launch, and speak for, any program on the system.
enum BundlePath {
    /// The absolute path with every symbolic link, `.` and `..` resolved. Relative paths are
    /// refused: they would be resolved against the daemon's working folder, which means
    /// nothing to the caller (lsctl and the app runtime send absolute paths).
    static func canonical(_ path: String) throws(BundleReadFailure) -> String {
        guard path.hasPrefix("/") else {
            throw .refused(BundleError(path: path, key: nil, problem: "is not an absolute path; give the bundle folder's full path"))
        }
        guard let resolved = resolve(path) else {
            let code = errno
            let error = BundleError(path: path, key: nil, problem: code == ENOENT
                ? "has no readable Info.plist: the folder does not exist"
                : "cannot be resolved: \(ReadFailure.text(code))")
            throw BundleReadFailure.classify(code, what: "the bundle folder", absent: error, unreadable: error)
        }
        var info = stat()
        guard stat(resolved, &info) == 0 else {
            let code = errno
            throw BundleReadFailure.classify(code, what: "the bundle folder", absent: notAFolder(path),
                                             unreadable: BundleError(path: path, key: nil, problem: "cannot be read: \(ReadFailure.text(code))"))
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .refused(notAFolder(path)) }
        return resolved
    }

    private static func notAFolder(_ path: String) -> BundleError {
        BundleError(path: path, key: nil, problem: "is not a folder; a bundle is a folder holding Info.plist and the executable")
    }

    /// Refuses an executable that is missing, resolves outside the bundle, is not a regular
    /// file, or may not be run. `bundle.path` is canonical.
    static func checkExecutable(of bundle: AppBundle) throws(BundleError) {
        do throws(BundleReadFailure) {
            try examineExecutable(of: bundle)
        } catch {
            throw error.error
        }
    }

    /// `checkExecutable`, telling a refusal from an executable that could not be examined
    /// now (`ReadFailure`), for a scan.
    static func examineExecutable(of bundle: AppBundle) throws(BundleReadFailure) {
        func refuse(_ problem: String) -> BundleError {
            BundleError(path: bundle.path, key: "CFBundleExecutable", problem: "names '\(bundle.executable)', which \(problem)")
        }
        func failure(_ code: Int32, _ doing: String) -> BundleReadFailure {
            let error = code == ENOENT ? refuse("does not exist in the bundle") : refuse("\(doing): \(ReadFailure.text(code))")
            return BundleReadFailure.classify(code, what: "its executable", absent: error, unreadable: error)
        }
        guard let resolved = resolve(bundle.executablePath) else { throw failure(errno, "cannot be resolved") }
        let inside = bundle.path == "/" ? "/" : bundle.path + "/"
        guard resolved.hasPrefix(inside) else {
            throw .refused(refuse("resolves to \(resolved), outside the bundle; put the executable itself in the bundle folder"))
        }
        var info = stat()
        guard stat(resolved, &info) == 0 else { throw failure(errno, "cannot be read") }
        // A folder passes access(X_OK) (search permission), so check the kind first.
        guard info.st_mode & S_IFMT != S_IFDIR else { throw .refused(refuse("is a folder, not an executable file")) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .refused(refuse("is not a regular file")) }
        guard access(resolved, X_OK) == 0 else {
            // EACCES is the answer (its mode): not executable. Anything else is no answer.
            let code = errno
            if code == EACCES || ReadFailure.isAbsence(code) { throw .refused(refuse("is not executable (chmod +x it)")) }
            throw .unreadable(refuse("cannot be checked: \(ReadFailure.text(code))"), what: "its executable", code: code)
        }
    }

    /// `realpath(3)`, or nil with `errno` set.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
