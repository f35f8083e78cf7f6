import Foundation
import LaunchServicesCore

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
    /// Of the running apps, those suspended in the background.
    var appsSuspended: Int
    var opensServed: Int
    /// Pasteboards holding items, and how many of those are kept across restarts.
    var pasteboards: Int
    var persistentPasteboards: Int
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

/// One line of `lsctl pasteboard list`: what a pasteboard holds, never the data itself.
struct PasteboardReport: Encodable {
    var name: String
    var changeCount: UInt64
    var items: [Item]
    var bytes: Int
    var expiresInSeconds: UInt64?
    var persistent: Bool
    var passwordProtected: Bool

    struct Item: Encodable {
        var type: String
        var bytes: Int
    }

    init(_ snapshot: PasteboardSnapshot) {
        name = snapshot.name
        changeCount = snapshot.changeCount
        // A protected pasteboard's types and sizes stay private too.
        items = snapshot.passwordProtected ? [] : snapshot.items.map { Item(type: $0.type, bytes: $0.data.count) }
        bytes = snapshot.passwordProtected ? 0 : snapshot.items.reduce(0) { $0 + $1.data.count }
        expiresInSeconds = snapshot.expiresInSeconds
        persistent = snapshot.persistent
        passwordProtected = snapshot.passwordProtected
    }
}
