import Foundation
import LaunchServicesCore

/// Finds and reads app bundles: any folder holding an `Info.plist`, directly inside one of
/// the apps folders. The plist is read with a bound (`InfoPlistFile`), checked for size and
/// nesting (`PropertyListBounds`) before Foundation's `PropertyListDecoder` (XML or binary)
/// sees it, validated by the core, and the executable is checked to be a runnable file
/// inside the bundle.
///
/// A scan tells what it could not read apart from what it refused (`ReadFailure`): a
/// bundle refused is the user's doing, and a folder or a bundle that could not be read now
/// (the descriptor limit, an I/O error) is named in the result's `coverage`, so that nothing
/// registered from it is withdrawn.
public enum BundleLoader {
    public struct ScanResult: Sendable {
        public var bundles: [AppBundle] = []
        public var errors: [BundleError] = []
        /// The folders read, and the folders and bundles that could not be read now.
        public var coverage = ScanCoverage()
    }

    /// Scans every folder. A bad bundle yields a named error and the others still load; a
    /// bundle id already seen in an earlier folder is refused for the later one. A folder
    /// that is not there (or is not a folder) holds nothing.
    public static func scan(folders: [String]) -> ScanResult {
        scan(folders: folders, listing: FolderListing.read)
    }

    /// `scan`, with the folders listed by `listing` (tests stand in for the system there).
    static func scan(folders: [String], listing: (String) -> FolderListing) -> ScanResult {
        var result = ScanResult()
        var seen: [String: String] = [:]
        for given in folders {
            let folder = withoutTrailingSlash(given)
            let canonical = BundlePath.resolve(folder)
            let entries: [String]
            switch listing(folder) {
            case .entries(let names): entries = names.sorted()
            case .absent: entries = []
            case .unreadable(let code):
                result.coverage.unreadable.append(UnreadablePath(kind: .appsFolder, path: folder, canonicalPath: canonical, reason: ReadFailure.text(code)))
                continue
            }
            result.coverage.readFolders.insert(folder)
            if let canonical { result.coverage.readFolders.insert(canonical) }
            for entry in entries where !entry.hasPrefix(".") {
                let path = (folder as NSString).appendingPathComponent(entry)
                var info = stat()
                guard stat(path + "/Info.plist", &info) == 0 else {
                    // No Info.plist: not a bundle. Not known now: perhaps one.
                    let code = errno
                    if !ReadFailure.isAbsence(code) { result.coverage.unreadable.append(unreadable(path, what: "Info.plist", code: code)) }
                    continue
                }
                do throws(BundleReadFailure) {
                    let bundle = try read(bundleAt: path)
                    if let first = seen[bundle.id] {
                        result.errors.append(BundleError(path: path, key: "CFBundleIdentifier", problem: "'\(bundle.id)' is already registered from \(first); bundle identifiers must be unique",
                                                         declaredSchemes: bundle.schemes))
                        continue
                    }
                    seen[bundle.id] = path
                    result.bundles.append(bundle)
                } catch {
                    switch error {
                    case .refused(let refusal): result.errors.append(refusal)
                    case .unreadable(_, let what, let code): result.coverage.unreadable.append(unreadable(path, what: what, code: code))
                    }
                }
            }
        }
        return result
    }

    private static func unreadable(_ path: String, what: String, code: Int32) -> UnreadablePath {
        UnreadablePath(kind: .bundle, path: path, canonicalPath: BundlePath.resolve(path), reason: "\(what): \(ReadFailure.text(code))")
    }

    private static func withoutTrailingSlash(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Reads and validates one bundle folder, given by its absolute path. The bundle's path
    /// is made canonical (symbolic links, `.` and `..` resolved), so one bundle has one path.
    public static func load(bundleAt given: String, limits: PropertyListLimits = .infoPlist) throws(BundleError) -> AppBundle {
        do throws(BundleReadFailure) {
            return try read(bundleAt: given, limits: limits)
        } catch {
            throw error.error
        }
    }

    /// `load`, telling a refusal from a bundle that could not be read now, for a scan.
    static func read(bundleAt given: String, limits: PropertyListLimits = .infoPlist) throws(BundleReadFailure) -> AppBundle {
        let path = try BundlePath.canonical(given)
        let bytes = try InfoPlistFile.read(bundle: path, limit: limits.maximumSize)
        do {
            try PropertyListBounds.check(bytes, limits: limits)
        } catch {
            throw .refused(BundleError(path: path, key: nil, problem: "Info.plist \(error)"))
        }
        let plist: InfoPlist
        do {
            plist = try PropertyListDecoder().decode(InfoPlist.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.isEmpty {
            throw .refused(BundleError(path: path, key: nil, problem: "Info.plist must hold a dictionary at its top level (<dict> with CFBundleIdentifier, CFBundleExecutable, …)"))
        } catch let DecodingError.typeMismatch(type, context) {
            throw .refused(BundleError(path: path, key: keyPath(context), problem: "has the wrong type (expected \(typeName(type)))"))
        } catch let DecodingError.valueNotFound(_, context) {
            throw .refused(BundleError(path: path, key: keyPath(context), problem: "is missing a value"))
        } catch {
            throw .refused(BundleError(path: path, key: nil, problem: "Info.plist is not a valid property list: \(describe(error))"))
        }
        let bundle: AppBundle
        do throws(BundleError) {
            bundle = try AppBundle(validating: plist, path: path)
        } catch {
            throw .refused(withDeclaredSchemes(error, plist))
        }
        do throws(BundleReadFailure) {
            try BundlePath.examineExecutable(of: bundle)
        } catch {
            switch error {
            case .refused(let refusal): throw .refused(withDeclaredSchemes(refusal, plist))
            case .unreadable(let refusal, let what, let code): throw .unreadable(withDeclaredSchemes(refusal, plist), what: what, code: code)
            }
        }
        return bundle
    }

    private static func withDeclaredSchemes(_ error: BundleError, _ plist: InfoPlist) -> BundleError {
        var refusal = error
        refusal.declaredSchemes = declaredSchemes(plist)
        return refusal
    }

    /// The valid schemes a refused Info.plist declares (those that would be claimed had the
    /// bundle validated), for `lsctl explain`.
    static func declaredSchemes(_ plist: InfoPlist) -> [URLScheme] {
        var seen: Set<URLScheme> = []
        return (plist.urlTypes ?? []).flatMap { $0.schemes ?? [] }.compactMap { text in
            guard let scheme = try? URLScheme(validating: text), scheme != CallbackAddress.scheme, seen.insert(scheme).inserted else { return nil }
            return scheme
        }
    }

    static func keyPath(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is [Any].Type: return "an array"
        default: return "\(type)".contains("Array") ? "an array" : ("\(type)".contains("Dictionary") || "\(type)".contains("URLType") ? "a dictionary" : "\(type)")
        }
    }

    static func describe(_ error: Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return context.underlyingError.map { "\($0)" } ?? context.debugDescription
        }
        return "\(error)"
    }
}
