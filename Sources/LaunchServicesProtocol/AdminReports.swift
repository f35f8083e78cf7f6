/// The JSON documents the daemon answers administrative requests with (`queryResult`), and
/// `lsctl --json` prints verbatim. The daemon encodes them with sorted keys, pretty-printed,
/// slashes unescaped, and an absent optional left out (PROTOCOL.md §9). Field names are
/// part of the interface: add, never rename.

/// `status`: the daemon's state.
public struct StatusReport: Codable, Sendable, Equatable {
    public var version: String
    public var pid: Int32
    public var socket: String
    public var uptimeSeconds: Double
    public var appsRegistered: Int
    public var schemesRegistered: Int
    public var appsRunning: Int
    /// Of the running apps, those suspended in the background.
    public var appsSuspended: Int
    public var opensServed: Int
    /// Pasteboards holding items, and how many of those are kept across restarts.
    public var pasteboards: Int
    public var persistentPasteboards: Int
    public var frontmost: String?
    /// Empty for an app asking.
    public var appsFolders: [String]
    /// Empty for an app asking.
    public var refusedBundles: [String]

    public init(version: String, pid: Int32, socket: String, uptimeSeconds: Double, appsRegistered: Int, schemesRegistered: Int,
                appsRunning: Int, appsSuspended: Int, opensServed: Int, pasteboards: Int, persistentPasteboards: Int,
                frontmost: String?, appsFolders: [String], refusedBundles: [String]) {
        self.version = version
        self.pid = pid
        self.socket = socket
        self.uptimeSeconds = uptimeSeconds
        self.appsRegistered = appsRegistered
        self.schemesRegistered = schemesRegistered
        self.appsRunning = appsRunning
        self.appsSuspended = appsSuspended
        self.opensServed = opensServed
        self.pasteboards = pasteboards
        self.persistentPasteboards = persistentPasteboards
        self.frontmost = frontmost
        self.appsFolders = appsFolders
        self.refusedBundles = refusedBundles
    }
}

/// One registered app (`apps` lists them; `register` answers with one).
public struct AppReport: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var path: String
    public var executable: String
    public var schemes: [String]
    public var queriesSchemes: [String]

    public init(id: String, name: String, path: String, executable: String, schemes: [String], queriesSchemes: [String]) {
        self.id = id
        self.name = name
        self.path = path
        self.executable = executable
        self.schemes = schemes
        self.queriesSchemes = queriesSchemes
    }
}

/// One scheme and the app that opens it (`schemes`, `conflicts`).
public struct SchemeReport: Codable, Sendable, Equatable {
    public var scheme: String
    public var app: String
    /// `userDefault`, `onlyClaimant` or `rule` (smallest bundle id).
    public var reason: String
    public var claimants: [String]

    public init(scheme: String, app: String, reason: String, claimants: [String]) {
        self.scheme = scheme
        self.app = app
        self.reason = reason
        self.claimants = claimants
    }
}

/// Which app would open a URL, and why (`explain`, `default`, `clear-default`).
public struct ExplainReport: Codable, Sendable, Equatable {
    public var url: String
    public var scheme: String
    public var app: String?
    /// `userDefault`, `onlyClaimant`, `rule`, or `noHandler`.
    public var reason: String
    public var why: String
    public var claimants: [String]
    public var userDefault: String?

    public init(url: String, scheme: String, app: String?, reason: String, why: String, claimants: [String], userDefault: String?) {
        self.url = url
        self.scheme = scheme
        self.app = app
        self.reason = reason
        self.why = why
        self.claimants = claimants
        self.userDefault = userDefault
    }
}

/// One live app (`running`).
public struct RunningReport: Codable, Sendable, Equatable {
    public var id: String
    public var state: String
    public var pid: Int32?
    public var frontmost: Bool
    public var pendingOpens: Int
    public var phase: String?

    public init(id: String, state: String, pid: Int32?, frontmost: Bool, pendingOpens: Int, phase: String?) {
        self.id = id
        self.state = state
        self.pid = pid
        self.frontmost = frontmost
        self.pendingOpens = pendingOpens
        self.phase = phase
    }
}

/// What a rescan of the apps folders changed (`rescan`).
public struct RescanSummary: Codable, Sendable, Equatable {
    public var added: [String]
    public var changed: [String]
    public var removed: [String]
    public var refused: [String]

    public init(added: [String] = [], changed: [String] = [], removed: [String] = [], refused: [String] = []) {
        self.added = added
        self.changed = changed
        self.removed = removed
        self.refused = refused
    }
}

/// The answer to `register`: `{"registered": {…}}`.
public struct RegisterReport: Codable, Sendable, Equatable {
    public var registered: AppReport

    public init(registered: AppReport) { self.registered = registered }
}

/// The answer to `unregister`: `{"unregistered": ID}`, with a `note` when the bundle is in
/// an apps folder (it comes back at the next scan).
public struct UnregisterReport: Codable, Sendable, Equatable {
    public var unregistered: String
    public var note: String?

    public init(unregistered: String, note: String? = nil) {
        self.unregistered = unregistered
        self.note = note
    }
}

/// One pasteboard (`pasteboards`, `lsctl pasteboard list`): what it holds, never the data
/// itself. A password-protected pasteboard shows no items and 0 bytes.
public struct PasteboardReport: Codable, Sendable, Equatable {
    public var name: String
    public var changeCount: UInt64
    public var items: [Item]
    public var bytes: Int
    public var expiresInSeconds: UInt64?
    public var persistent: Bool
    public var passwordProtected: Bool

    public struct Item: Codable, Sendable, Equatable {
        public var type: String
        public var bytes: Int

        public init(type: String, bytes: Int) {
            self.type = type
            self.bytes = bytes
        }
    }

    public init(name: String, changeCount: UInt64, items: [Item], bytes: Int, expiresInSeconds: UInt64?, persistent: Bool, passwordProtected: Bool) {
        self.name = name
        self.changeCount = changeCount
        self.items = items
        self.bytes = bytes
        self.expiresInSeconds = expiresInSeconds
        self.persistent = persistent
        self.passwordProtected = passwordProtected
    }
}

/// The answer to the test hook `debug-stall` (`DebugHook.stall`).
public struct DebugStallReport: Codable, Sendable, Equatable {
    public var stalling: Bool

    public init(stalling: Bool) { self.stalling = stalling }
}
