import Foundation
import LaunchServicesCore

/// Finds and reads app bundles: any folder holding an `Info.plist`, directly inside one of
/// the apps folders. The plist is read with a bound (`InfoPlistFile`), checked for size and
/// nesting (`PropertyListBounds`) before Foundation's `PropertyListDecoder` (XML or binary)
/// sees it, validated by the core, and the executable is checked to be a runnable file
/// inside the bundle.
public enum BundleLoader {
    public struct ScanResult: Sendable {
        public var bundles: [AppBundle] = []
        public var errors: [BundleError] = []
    }

    /// Scans every folder. A bad bundle yields a named error and the others still load; a
    /// bundle id already seen in an earlier folder is refused for the later one.
    public static func scan(folders: [String]) -> ScanResult {
        var result = ScanResult()
        var seen: [String: String] = [:]
        for folder in folders {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let entries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            for entry in entries where !entry.hasPrefix(".") {
                let path = (folder as NSString).appendingPathComponent(entry)
                guard FileManager.default.fileExists(atPath: path + "/Info.plist") else { continue }
                do {
                    let bundle = try load(bundleAt: path)
                    if let first = seen[bundle.id] {
                        result.errors.append(BundleError(path: path, key: "CFBundleIdentifier", problem: "'\(bundle.id)' is already registered from \(first); bundle identifiers must be unique",
                                                         declaredSchemes: bundle.schemes))
                        continue
                    }
                    seen[bundle.id] = path
                    result.bundles.append(bundle)
                } catch {
                    result.errors.append(error)
                }
            }
        }
        return result
    }

    /// Reads and validates one bundle folder, given by its absolute path. The bundle's path
    /// is made canonical (symbolic links, `.` and `..` resolved), so one bundle has one path.
    public static func load(bundleAt given: String, limits: PropertyListLimits = .infoPlist) throws(BundleError) -> AppBundle {
        let path = try BundlePath.canonical(given)
        let bytes = try InfoPlistFile.read(bundle: path, limit: limits.maximumSize)
        do {
            try PropertyListBounds.check(bytes, limits: limits)
        } catch {
            throw BundleError(path: path, key: nil, problem: "Info.plist \(error)")
        }
        let plist: InfoPlist
        do {
            plist = try PropertyListDecoder().decode(InfoPlist.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.isEmpty {
            throw BundleError(path: path, key: nil, problem: "Info.plist must hold a dictionary at its top level (<dict> with CFBundleIdentifier, CFBundleExecutable, …)")
        } catch let DecodingError.typeMismatch(type, context) {
            throw BundleError(path: path, key: keyPath(context), problem: "has the wrong type (expected \(typeName(type)))")
        } catch let DecodingError.valueNotFound(_, context) {
            throw BundleError(path: path, key: keyPath(context), problem: "is missing a value")
        } catch {
            throw BundleError(path: path, key: nil, problem: "Info.plist is not a valid property list: \(describe(error))")
        }
        do throws(BundleError) {
            let bundle = try AppBundle(validating: plist, path: path)
            try BundlePath.checkExecutable(of: bundle)
            return bundle
        } catch {
            var refusal = error
            refusal.declaredSchemes = declaredSchemes(plist)
            throw refusal
        }
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
