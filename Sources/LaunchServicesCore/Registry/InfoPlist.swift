/// The keys of an app bundle's `Info.plist` that Launch Services reads, as decoded
/// (by `PropertyListDecoder` at the edge) before validation.
///
/// Everything is optional here so that a missing key becomes a named validation error,
/// not an opaque decoding failure.
public struct InfoPlist: Decodable, Sendable, Equatable {
    public var bundleIdentifier: String?
    public var bundleName: String?
    public var bundleExecutable: String?
    public var urlTypes: [URLType]?
    public var queriesSchemes: [String]?

    public struct URLType: Decodable, Sendable, Equatable {
        public var name: String?
        public var schemes: [String]?
        public init(name: String?, schemes: [String]?) {
            self.name = name
            self.schemes = schemes
        }
        enum CodingKeys: String, CodingKey {
            case name = "CFBundleURLName"
            case schemes = "CFBundleURLSchemes"
        }
    }

    public init(bundleIdentifier: String?, bundleName: String? = nil, bundleExecutable: String?, urlTypes: [URLType]? = nil, queriesSchemes: [String]? = nil) {
        self.bundleIdentifier = bundleIdentifier
        self.bundleName = bundleName
        self.bundleExecutable = bundleExecutable
        self.urlTypes = urlTypes
        self.queriesSchemes = queriesSchemes
    }

    enum CodingKeys: String, CodingKey {
        case bundleIdentifier = "CFBundleIdentifier"
        case bundleName = "CFBundleName"
        case bundleExecutable = "CFBundleExecutable"
        case urlTypes = "CFBundleURLTypes"
        case queriesSchemes = "LSApplicationQueriesSchemes"
    }
}
