import Foundation

/// One object of the configuration file: the top level, or a section under it. Its stored
/// properties are its keys. The unknown-key and whole-number checks read them off the very
/// type the decoder fills, so each key is written once, and a key added to the layout is
/// accepted, decoded and checked without another list to keep in step.
protocol ConfigurationSection: Decodable {
    init()
    /// The word a refusal lists this section's keys under ("known", or "phases").
    static var keysAre: String { get }
}

extension ConfigurationSection {
    static var keysAre: String { "known" }

    /// The section's keys, read off its fields: whether each takes a whole number (an `Int`),
    /// and the layout of each that holds a section of its own.
    static var fields: [(key: String, wholeNumber: Bool, section: (any ConfigurationSection.Type)?)] {
        Mirror(reflecting: Self()).children.compactMap { child in
            let fieldType = type(of: child.value)
            return child.label.map { ($0, fieldType == Int?.self, (fieldType as? any OptionalSection.Type)?.section) }
        }
    }

    static var keys: [String] { fields.map(\.key) }
}

/// An optional section field (every field is optional: the file may leave out any key).
protocol OptionalSection {
    static var section: any ConfigurationSection.Type { get }
}

extension Optional: OptionalSection where Wrapped: ConfigurationSection {
    static var section: any ConfigurationSection.Type { Wrapped.self }
}

extension DaemonConfiguration {
    /// The file's layout. Unknown keys are refused so a typo does not silently do nothing.
    struct File: ConfigurationSection {
        var appsFolders: [String]?
        var deadlines: Deadlines?
        var maximumFrameLength: Int?
        /// Before 0.2 the only request limit, per app; now an alias of `connections.maximumPendingRequests`.
        var maximumPendingOpensPerApp: Int?
        var connections: Connections?
        var shutdownGraceSeconds: Double?
        var callbackPolicy: String?
        var pasteboard: Pasteboard?
        var backgroundGraceSeconds: Double?
        var maximumLiveApps: Int?
        var maximumOpensInFlightPerApp: Int?
        var prewriteLaunchMethods: Bool?
        var watchAppsFolders: Bool?
        var appLogs: AppLogs?
        var desktopEntries: DesktopEntries?

        /// Allowed at the top level besides the settings, and ignored: a note for the reader.
        static let comment = "$comment"

        struct AppLogs: ConfigurationSection {
            var maximumBytes: Int?
            var destination: String?
        }

        /// `DesktopEntrySettings`: reading and watching, then `DesktopLaunchSettings`' keys.
        struct DesktopEntries: ConfigurationSection {
            var enabled: Bool?
            var watch: Bool?
            var graceSeconds: Double?
            var stderrSettleSeconds: Double?
            var reportMarginSeconds: Double?
            var stderrTailLines: Int?
            var stderrTailBytes: Int?
            var scopes: Bool?
            var scopeTimeoutSeconds: Double?
            var maximumScopeRequestsWaiting: Int?
            var maximumRunning: Int?
        }

        struct Pasteboard: ConfigurationSection {
            var maximumBytes: Int?
            var maximumTotalBytes: Int?
            var maximumPasteboards: Int?
            var maximumItems: Int?
            var maximumExpirySeconds: Int?
            var maximumOperationsPerConnection: Int?
            var maximumPasswordChecksWaiting: Int?
        }

        struct Connections: ConfigurationSection {
            var maximumPerUser: Int?
            var maximumPerProcess: Int?
            var maximumPerApp: Int?
            var reservedForFirstConnections: Int?
            var firstMessageSeconds: Double?
            var maximumPendingRequests: Int?
            var maximumCallbackAddresses: Int?
            var maximumQueuedOutputBytes: Int?
        }

        /// One deadline per launch phase, named as the phase is (`LaunchPhase`'s raw values).
        struct Deadlines: ConfigurationSection {
            static let keysAre = "phases"
            var launch: Double?
            var willFinishLaunching: Double?
            var didFinishLaunching: Double?
            var openURL: Double?
        }

        /// Seconds as a `Duration`, in whole milliseconds: the one conversion of the file's
        /// seconds. Refused, naming `key`, outside (0, `upTo`].
        static func seconds(_ value: Double, key: String, upTo limit: Double, path: String) throws -> Duration {
            guard value > 0, value <= limit else {
                throw ConfigurationError(path: path, problem: "\(key) is \(value); give seconds between 0 and \(Int(limit))")
            }
            return .milliseconds(Int64(value * 1000))
        }
    }

    /// Refuses, by name, a key the layout does not have and a fraction where a count is
    /// due (JSONDecoder reports 4096.5 for an `Int` only as "not valid JSON", without the key).
    static func rejectUnknownKeys(_ data: Data, path: String) throws {
        // Fragments allowed, so a scalar at the top level is named as such (JSONDecoder would
        // report it under an empty key); text that is not JSON at all is left to JSONDecoder.
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return }
        guard let top = object as? [String: Any] else { throw ConfigurationError(path: path, problem: "must hold a JSON object at the top level") }
        let known = Set(File.keys + [File.comment])
        for key in top.keys where !known.contains(key) {
            throw ConfigurationError(path: path, problem: "has unknown key '\(key)'; known keys: \(known.sorted().joined(separator: ", "))")
        }
        var objects: [(prefix: String, object: [String: Any], layout: any ConfigurationSection.Type)] = [("", top, File.self)]
        for field in File.fields {
            guard let layout = field.section, let object = top[field.key] as? [String: Any] else { continue }
            let keys = Set(layout.keys)
            for key in object.keys where !keys.contains(key) {
                throw ConfigurationError(path: path, problem: "has unknown key '\(field.key).\(key)'; \(layout.keysAre): \(keys.sorted().joined(separator: ", "))")
            }
            objects.append((field.key + ".", object, layout))
        }
        for (prefix, object, layout) in objects {
            for field in layout.fields where field.wholeNumber {
                if let number = object[field.key] as? NSNumber, !(number is Bool), number.doubleValue != number.doubleValue.rounded(.towardZero) {
                    throw ConfigurationError(path: path, problem: "key '\(prefix)\(field.key)' is \(number); give a whole number")
                }
            }
        }
    }
}
