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
    /// Where launched apps' stdout and stderr go: `journal` (entries with the bundle id as
    /// syslog identifier), or the folder holding `ID.log` files. Absent for an app asking,
    /// and from daemons before it.
    public var appLogs: String?

    public init(version: String, pid: Int32, socket: String, uptimeSeconds: Double, appsRegistered: Int, schemesRegistered: Int,
                appsRunning: Int, appsSuspended: Int, opensServed: Int, pasteboards: Int, persistentPasteboards: Int,
                frontmost: String?, appsFolders: [String], refusedBundles: [String], appLogs: String? = nil) {
        self.appLogs = appLogs
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

/// One app's claim on a scheme: the app and since when it is registered, as ISO-8601 in
/// UTC with milliseconds (`2026-11-23T20:07:26.123Z`, `ClaimTime`).
public struct ClaimReport: Codable, Sendable, Equatable {
    public var app: String
    public var since: String

    public init(app: String, since: String) {
        self.app = app
        self.since = since
    }
}

/// One scheme and the app that opens it (`schemes`, `conflicts`).
public struct SchemeReport: Codable, Sendable, Equatable {
    public var scheme: String
    public var app: String
    /// `userDefault`, `onlyClaimant` or `earliestRegistration` (the app registered first;
    /// ties, the smallest bundle id). Daemons before the registration time said `rule`.
    public var reason: String
    /// Sorted by bundle id.
    public var claimants: [String]
    /// Every claim in the rule's order: earliest registration first, ties by bundle id.
    /// Empty when decoded from a daemon that did not send it.
    public var claims: [ClaimReport]

    public init(scheme: String, app: String, reason: String, claimants: [String], claims: [ClaimReport] = []) {
        self.scheme = scheme
        self.app = app
        self.reason = reason
        self.claimants = claimants
        self.claims = claims
    }

    private enum CodingKeys: String, CodingKey { case scheme, app, reason, claimants, claims }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(scheme: try c.decode(String.self, forKey: .scheme), app: try c.decode(String.self, forKey: .app),
                  reason: try c.decode(String.self, forKey: .reason), claimants: try c.decode([String].self, forKey: .claimants),
                  claims: try c.decodeIfPresent([ClaimReport].self, forKey: .claims) ?? [])
    }
}

/// Which app would open a URL, and why (`explain`, `default`, `clear-default`).
public struct ExplainReport: Codable, Sendable, Equatable {
    public var url: String
    public var scheme: String
    public var app: String?
    /// `userDefault`, `onlyClaimant`, `earliestRegistration`, or `noHandler` (daemons
    /// before the registration time said `rule` for `earliestRegistration`).
    public var reason: String
    public var why: String
    /// Sorted by bundle id.
    public var claimants: [String]
    public var userDefault: String?
    /// Every claim in the rule's order, with since when (see `SchemeReport.claims`).
    public var claims: [ClaimReport]

    public init(url: String, scheme: String, app: String?, reason: String, why: String, claimants: [String], userDefault: String?,
                claims: [ClaimReport] = []) {
        self.url = url
        self.scheme = scheme
        self.app = app
        self.reason = reason
        self.why = why
        self.claimants = claimants
        self.userDefault = userDefault
        self.claims = claims
    }

    private enum CodingKeys: String, CodingKey { case url, scheme, app, reason, why, claimants, userDefault, claims }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(url: try c.decode(String.self, forKey: .url), scheme: try c.decode(String.self, forKey: .scheme),
                  app: try c.decodeIfPresent(String.self, forKey: .app), reason: try c.decode(String.self, forKey: .reason),
                  why: try c.decode(String.self, forKey: .why), claimants: try c.decode([String].self, forKey: .claimants),
                  userDefault: try c.decodeIfPresent(String.self, forKey: .userDefault),
                  claims: try c.decodeIfPresent([ClaimReport].self, forKey: .claims) ?? [])
    }
}

/// Registration times as reports show them: milliseconds since the Unix epoch written as
/// ISO-8601 in UTC with milliseconds, `2026-11-23T20:07:26.123Z`.
public enum ClaimTime {
    public static func iso8601(_ milliseconds: Int64) -> String {
        let ms = milliseconds.modulo(1000)
        let seconds = (milliseconds - ms) / 1000
        let secondOfDay = seconds.modulo(86_400)
        let days = (seconds - secondOfDay) / 86_400
        // Days since 1970-01-01 to a civil date (proleptic Gregorian).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let text = String(v)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(ms, 3))Z"
    }
}

private extension Int64 {
    /// The remainder with the sign of the divisor (times before 1970 stay ordered).
    func modulo(_ divisor: Int64) -> Int64 { ((self % divisor) + divisor) % divisor }
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
