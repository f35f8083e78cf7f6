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
    /// State databases found damaged at this start and set aside (each kept unchanged
    /// under a new name, a new one started). Absent when none, for an app asking, and
    /// from daemons before it.
    public var damagedDatabases: [DamagedDatabaseReport]?
    /// What the daemon cannot keep right now, each a sentence (e.g. persistent pasteboards,
    /// when `pasteboard.sqlite` could not be opened). Absent when none, for an app asking,
    /// and from daemons before it.
    public var storageProblems: [String]?
    /// The apps folders and bundles the last scan could not read (`RescanSummary.unreadable`):
    /// what was registered from them is kept as it was until they can be read. Absent when
    /// none, for an app asking, and from daemons before it.
    public var unreadableInAppsFolders: [String]?
    /// The desktop entries (added in 0.3): whether they are read, how many, from where, and
    /// what could not be read. Absent for an app asking, and from daemons before it.
    public var desktopEntries: DesktopEntriesReport?

    public init(version: String, pid: Int32, socket: String, uptimeSeconds: Double, appsRegistered: Int, schemesRegistered: Int,
                appsRunning: Int, appsSuspended: Int, opensServed: Int, pasteboards: Int, persistentPasteboards: Int,
                frontmost: String?, appsFolders: [String], refusedBundles: [String], appLogs: String? = nil,
                damagedDatabases: [DamagedDatabaseReport]? = nil, storageProblems: [String]? = nil, unreadableInAppsFolders: [String]? = nil,
                desktopEntries: DesktopEntriesReport? = nil) {
        self.desktopEntries = desktopEntries
        self.unreadableInAppsFolders = unreadableInAppsFolders
        self.appLogs = appLogs
        self.damagedDatabases = damagedDatabases
        self.storageProblems = storageProblems
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
    /// The app's `CFBundleURLTypes` entries in declaration order: each one's `CFBundleURLName`
    /// and schemes. Empty when decoded from a daemon that did not send it, and for a
    /// registration saved before names were kept.
    public var urlTypes: [URLTypeReport]

    public init(id: String, name: String, path: String, executable: String, schemes: [String], queriesSchemes: [String],
                urlTypes: [URLTypeReport] = []) {
        self.id = id
        self.name = name
        self.path = path
        self.executable = executable
        self.schemes = schemes
        self.queriesSchemes = queriesSchemes
        self.urlTypes = urlTypes
    }

    private enum CodingKeys: String, CodingKey { case id, name, path, executable, schemes, queriesSchemes, urlTypes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  path: try c.decode(String.self, forKey: .path), executable: try c.decode(String.self, forKey: .executable),
                  schemes: try c.decode([String].self, forKey: .schemes), queriesSchemes: try c.decode([String].self, forKey: .queriesSchemes),
                  urlTypes: try c.decodeIfPresent([URLTypeReport].self, forKey: .urlTypes) ?? [])
    }
}

/// One `CFBundleURLTypes` entry of an app: its `CFBundleURLName` (the kind of URL, absent
/// when the entry has none) and its schemes, lowercase, in declaration order.
public struct URLTypeReport: Codable, Sendable, Equatable {
    public var name: String?
    public var schemes: [String]

    public init(name: String?, schemes: [String]) {
        self.name = name
        self.schemes = schemes
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
    /// `native` or `desktop` (added in 0.3; absent from older daemons: native). A desktop
    /// app is listed while the process the daemon started lives; its state is `running`.
    public var kind: String?
    /// A desktop app's transient systemd scope, once the user manager made it (added in 0.3).
    public var scope: String?

    public init(id: String, state: String, pid: Int32?, frontmost: Bool, pendingOpens: Int, phase: String?, kind: String? = nil, scope: String? = nil) {
        self.kind = kind
        self.scope = scope
        self.id = id
        self.state = state
        self.pid = pid
        self.frontmost = frontmost
        self.pendingOpens = pendingOpens
        self.phase = phase
    }
}

/// The answer to `register`: `{"registered": {…}, "heldByOthers": […]}`.
public struct RegisterReport: Codable, Sendable, Equatable {
    public var registered: AppReport
    /// The schemes the app declares that open in another app (the user's default for it, or
    /// an app registered earlier): each with the app that holds it and why. Empty when the
    /// app opens every scheme it declares, and from daemons before it.
    public var heldByOthers: [SchemeReport]

    public init(registered: AppReport, heldByOthers: [SchemeReport] = []) {
        self.registered = registered
        self.heldByOthers = heldByOthers
    }

    private enum CodingKeys: String, CodingKey { case registered, heldByOthers }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(registered: try c.decode(AppReport.self, forKey: .registered),
                  heldByOthers: try c.decodeIfPresent([SchemeReport].self, forKey: .heldByOthers) ?? [])
    }
}

/// The answer to `unregister`: `{"unregistered": ID}`, with a `note` when the bundle is in
/// an apps folder (it comes back at the next scan), and `quitting` when the app was running.
public struct UnregisterReport: Codable, Sendable, Equatable {
    public var unregistered: String
    public var note: String?
    /// The pid of the app, when it was running: it is being quit as `lsctl quit` would
    /// (its connection closes; SIGTERM, then SIGKILL, after the grace). The answer does not
    /// wait for the exit.
    public var quitting: Int32?

    public init(unregistered: String, note: String? = nil, quitting: Int32? = nil) {
        self.unregistered = unregistered
        self.note = note
        self.quitting = quitting
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

/// One line of `lsctl history`: an open as the daemon answered it. Never the URL itself
/// (it may carry secrets): its scheme only.
public struct HistoryEntry: Codable, Sendable, Equatable {
    /// `outcome` of an open withdrawn before it reached the app: its caller left first.
    public static let withdrawn = "withdrawn"

    /// When it was answered, ISO-8601 UTC with milliseconds.
    public var time: String
    /// Who asked (the verified source application).
    public var source: String
    /// Lowercase; empty for an invalid URL without a valid scheme.
    public var scheme: String
    public var app: String?
    /// `cold`, `warm`, `resumed` or `hot`; absent when the open never reached an app.
    public var launchState: String?
    /// `opened`, the error code (`invalidURL`, `noHandler`, `notPermitted`, `timeout`, …), or
    /// `withdrawn`.
    public var outcome: String
    public var method: String?
    /// Milliseconds per phase, in order.
    public var phasesMs: [String: Double]
    /// The daemon's total, request in to answer out.
    public var totalMs: Double?
    /// `true` when the caller had disconnected before the open ended (it timed out waiting,
    /// or was stopped): the outcome was recorded, and nobody was answered. Absent otherwise,
    /// and from daemons before it.
    public var callerLeft: Bool?

    /// `native` or `desktop` (added in 0.3): what kind of app `app` is; absent when the open
    /// reached no app, and from older daemons.
    public var kind: String?
    /// A desktop app's launch (added in 0.3): `delivered`, `running`, `forwarded`, `exited`
    /// or `failedToStart`; `outcome` is then `opened` or the error code as for any open.
    public var desktopOutcome: String?
    /// The desktop app's process, when one was started (added in 0.3).
    public var pid: Int32?
    /// How the caller reached the daemon when not over its socket (added in 0.4): `dbus
    /// SENDER pid PID` for a D-Bus caller (its unique connection name, and the process the
    /// bus says it is). Absent for socket callers, and from older daemons.
    public var via: String?

    public init(time: String, source: String, scheme: String, app: String?, launchState: String?, outcome: String, method: String?, phasesMs: [String: Double], totalMs: Double?,
                callerLeft: Bool? = nil, kind: String? = nil, desktopOutcome: String? = nil, pid: Int32? = nil, via: String? = nil) {
        self.via = via
        self.callerLeft = callerLeft
        self.kind = kind
        self.desktopOutcome = desktopOutcome
        self.pid = pid
        self.time = time
        self.source = source
        self.scheme = scheme
        self.app = app
        self.launchState = launchState
        self.outcome = outcome
        self.method = method
        self.phasesMs = phasesMs
        self.totalMs = totalMs
    }
}

/// The answer to `quit ID`, sent once the app has exited.
public struct QuitReport: Codable, Sendable, Equatable {
    public var quit: String
    public var pid: Int32?
    /// How it ended: `exited` (after its connection closed, on its own), `terminated`
    /// (by SIGTERM) or `killed` (SIGKILL).
    public var ended: String
    /// The exit status as text, e.g. `exited with status 0`.
    public var status: String
    public var seconds: Double

    public init(quit: String, pid: Int32?, ended: String, status: String, seconds: Double) {
        self.quit = quit
        self.pid = pid
        self.ended = ended
        self.status = status
        self.seconds = seconds
    }
}
