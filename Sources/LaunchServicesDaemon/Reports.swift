import Foundation

/// The JSON documents `lsctl` receives (and prints verbatim with `--json`). Field names are
/// part of the interface: add, never rename.
struct StatusReport: Encodable {
    var version: String
    var pid: Int32
    var socket: String
    var uptimeSeconds: Double
    var appsRegistered: Int
    var schemesRegistered: Int
    var appsRunning: Int
    var opensServed: Int
    var frontmost: String?
    var appsFolders: [String]
    var refusedBundles: [String]
}

struct AppReport: Encodable {
    var id: String
    var name: String
    var path: String
    var executable: String
    var schemes: [String]
    var queriesSchemes: [String]
}

struct SchemeReport: Encodable {
    var scheme: String
    var app: String
    /// `userDefault`, `onlyClaimant` or `rule` (smallest bundle id).
    var reason: String
    var claimants: [String]
}

struct ExplainReport: Encodable {
    var url: String
    var scheme: String
    var app: String?
    /// `userDefault`, `onlyClaimant`, `rule`, or `noHandler`.
    var reason: String
    var why: String
    var claimants: [String]
    var userDefault: String?
}

struct RunningReport: Encodable {
    var id: String
    var state: String
    var pid: Int32?
    var frontmost: Bool
    var pendingOpens: Int
    var phase: String?
}

enum JSONDocument {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// What a rescan of the apps folders changed.
struct RescanSummary: Encodable {
    var added: [String] = []
    var changed: [String] = []
    var removed: [String] = []
    var refused: [String] = []
}
