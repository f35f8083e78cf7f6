/// A validated application: what the registry stores and resolution returns.
///
/// Its identifier is kept as is (the open path reads only that); every other field is packed
/// in one `AppBundleRecord` and decoded when read, so a registry of many apps holds two
/// values per app instead of a dozen allocations.
public struct AppBundle: Hashable, Sendable {
    /// `CFBundleIdentifier`, unique in the registry.
    public var id: String
    private var record: AppBundleRecord

    /// `CFBundleName`, or the identifier when absent.
    public var name: String {
        get { record.name }
        set { change { $0.name = newValue } }
    }
    /// The bundle folder.
    public var path: String {
        get { record.path }
        set { change { $0.path = newValue } }
    }
    /// `CFBundleExecutable`, relative to the bundle folder.
    public var executable: String {
        get { record.executable }
        set { change { $0.executable = newValue } }
    }
    /// Every scheme of every `CFBundleURLTypes` entry, normalized, without duplicates, in
    /// declaration order.
    public var schemes: [URLScheme] {
        get { record.schemes }
        set { change { $0.schemes = newValue } }
    }
    /// `LSApplicationQueriesSchemes`: the only schemes this app may ask `canOpenURL` about.
    public var queriesSchemes: Set<URLScheme> {
        get { record.queriesSchemes }
        set { change { $0.queriesSchemes = newValue } }
    }
    /// The `CFBundleURLTypes` entries in declaration order: each one's `CFBundleURLName` (the
    /// kind of URL, e.g. `com.acme.todolist`; `nil` when not given) and its schemes, normalized,
    /// without duplicates within the entry. Empty for a registration saved before names were kept.
    public var urlTypes: [URLType] {
        get { record.urlTypes }
        set { change { $0.urlTypes = newValue } }
    }

    /// Whether the app lists `scheme` in `LSApplicationQueriesSchemes` (without building the set).
    public func mayQuery(_ scheme: URLScheme) -> Bool { record.mayQuery(scheme) }

    /// Every field but the identifier, unpacked: what a setter changes one field of.
    private struct Fields {
        var name: String
        var path: String
        var executable: String
        var schemes: [URLScheme]
        var queriesSchemes: Set<URLScheme>
        var urlTypes: [URLType]
    }

    private mutating func change(_ body: (inout Fields) -> Void) {
        var fields = Fields(name: name, path: path, executable: executable, schemes: schemes, queriesSchemes: queriesSchemes, urlTypes: urlTypes)
        body(&fields)
        record = AppBundleRecord(name: fields.name, path: fields.path, executable: fields.executable, schemes: fields.schemes,
                                 queriesSchemes: fields.queriesSchemes, urlTypes: fields.urlTypes)
    }

    /// One `CFBundleURLTypes` entry, validated.
    public struct URLType: Hashable, Sendable {
        public var name: String?
        public var schemes: [URLScheme]

        public init(name: String?, schemes: [URLScheme]) {
            self.name = name
            self.schemes = schemes
        }
    }

    public init(id: String, name: String, path: String, executable: String, schemes: [URLScheme], queriesSchemes: Set<URLScheme> = [],
                urlTypes: [URLType] = []) {
        self.id = id
        record = AppBundleRecord(name: name, path: path, executable: executable, schemes: schemes, queriesSchemes: queriesSchemes, urlTypes: urlTypes)
    }

    /// The `CFBundleURLName` of the first URL type that declares `scheme`, if it has one.
    public func kind(of scheme: URLScheme) -> String? {
        urlTypes.first { $0.schemes.contains(scheme) }?.name
    }

    /// A `CFBundleURLName` is at most this many UTF-8 bytes.
    public static let maximumURLNameBytes = 255

    /// The executable's absolute path.
    public var executablePath: String { path.hasSuffix("/") ? path + executable : path + "/" + executable }

    /// iOS 15 caps `LSApplicationQueriesSchemes` at 50 entries.
    public static let maximumQueriesSchemes = 50

    /// Validates a decoded Info.plist. All-or-nothing: any bad key refuses the whole bundle,
    /// with an error naming the key, the bundle and what to do.
    public init(validating plist: InfoPlist, path: String) throws(BundleError) {
        guard let id = plist.bundleIdentifier, !id.isEmpty else {
            throw BundleError(path: path, key: "CFBundleIdentifier", problem: "is missing or empty; every bundle needs a unique identifier such as com.example.app")
        }
        guard Self.isValidIdentifier(id) else {
            throw BundleError(path: path, key: "CFBundleIdentifier", problem: "'\(id)' may contain only letters, digits, '-', '.' and '_'")
        }
        guard let executable = plist.bundleExecutable, !executable.isEmpty else {
            throw BundleError(path: path, key: "CFBundleExecutable", problem: "is missing or empty; name the executable file inside the bundle folder")
        }
        guard !executable.contains("/"), executable != ".", executable != ".." else {
            throw BundleError(path: path, key: "CFBundleExecutable", problem: "'\(executable)' must be a file name inside the bundle folder, without '/'")
        }
        var schemes: [URLScheme] = []
        var seen: Set<URLScheme> = []
        var urlTypes: [URLType] = []
        for (index, type) in (plist.urlTypes ?? []).enumerated() {
            if let name = type.name, let problem = Self.urlNameProblem(name) {
                throw BundleError(path: path, key: "CFBundleURLTypes[\(index)].CFBundleURLName", problem: problem)
            }
            guard let declared = type.schemes, !declared.isEmpty else {
                throw BundleError(path: path, key: "CFBundleURLTypes[\(index)].CFBundleURLSchemes", problem: "is missing or empty; list at least one scheme")
            }
            var typeSchemes: [URLScheme] = []
            var typeSeen: Set<URLScheme> = []
            for text in declared {
                let scheme: URLScheme
                do {
                    scheme = try URLScheme(validating: text)
                } catch {
                    throw BundleError(path: path, key: "CFBundleURLTypes[\(index)].CFBundleURLSchemes", problem: error.description)
                }
                guard scheme != CallbackAddress.scheme else {
                    throw BundleError(path: path, key: "CFBundleURLTypes[\(index)].CFBundleURLSchemes", problem: "declares '\(text)', which launchservicesd keeps for lsopen --wait callbacks; choose another scheme")
                }
                // A set beside the list: a 1 MiB plist can declare tens of thousands of schemes.
                if seen.insert(scheme).inserted { schemes.append(scheme) }
                if typeSeen.insert(scheme).inserted { typeSchemes.append(scheme) }
            }
            urlTypes.append(URLType(name: type.name, schemes: typeSchemes))
        }
        let queries = plist.queriesSchemes ?? []
        guard queries.count <= Self.maximumQueriesSchemes else {
            throw BundleError(path: path, key: "LSApplicationQueriesSchemes", problem: "lists \(queries.count) schemes; at most \(Self.maximumQueriesSchemes) are allowed")
        }
        var queriesSchemes: Set<URLScheme> = []
        for text in queries {
            do {
                queriesSchemes.insert(try URLScheme(validating: text))
            } catch {
                throw BundleError(path: path, key: "LSApplicationQueriesSchemes", problem: error.description)
            }
        }
        self.init(id: id, name: plist.bundleName ?? id, path: path, executable: executable, schemes: schemes, queriesSchemes: queriesSchemes, urlTypes: urlTypes)
    }

    /// Why `name` cannot be a `CFBundleURLName`, or `nil` when it can: not empty, at most
    /// `maximumURLNameBytes` UTF-8 bytes, no control characters.
    static func urlNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty; name the kind of URL, such as com.example.app, or leave the key out" }
        if name.utf8.count > maximumURLNameBytes {
            return "is \(name.utf8.count) bytes long; at most \(maximumURLNameBytes) are allowed"
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) {
            return "contains a control character; use a name such as com.example.app"
        }
        return nil
    }

    static func isValidIdentifier(_ id: String) -> Bool {
        id.utf8.allSatisfy { URLScheme.isAlpha($0) || URLScheme.isDigit($0) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F }
    }
}

extension AppBundle: CustomReflectable {
    /// The fields, not the packed bytes: what a test failure or `dump` shows.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "name": name, "path": path, "executable": executable, "schemes": schemes.map(\.normalized),
                                "queriesSchemes": queriesSchemes.map(\.normalized).sorted(), "urlTypes": urlTypes], displayStyle: .struct)
    }
}

/// A bundle that cannot be registered, and why: names the bundle, the key and the fix.
public struct BundleError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var key: String?
    public var problem: String
    /// The valid schemes the refused bundle's Info.plist declares, when it could be read:
    /// what `lsctl explain` names when a scheme opens in no app because of this refusal.
    public var declaredSchemes: [URLScheme]

    public init(path: String, key: String?, problem: String, declaredSchemes: [URLScheme] = []) {
        self.path = path
        self.key = key
        self.problem = problem
        self.declaredSchemes = declaredSchemes
    }

    /// Control characters escaped: a file name in an apps folder can hold any byte, and this
    /// text is logged and printed (TerminalText).
    public var description: String {
        if let key { return TerminalText.escapingControls("bundle \(path): \(key) \(problem)") }
        return TerminalText.escapingControls("bundle \(path): \(problem)")
    }
}
