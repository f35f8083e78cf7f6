import Foundation
import LaunchServicesCore

/// The daemon's settings. Every value has a built-in default, so no file is needed; a JSON
/// file (`--config`, else `$XDG_CONFIG_HOME/launchservices/launchservicesd.json` when it
/// exists) overrides any subset. `config/launchservicesd.json` documents every key.
public struct DaemonConfiguration: Sendable, Equatable {
    public var appsFolders: [String]
    /// Whether the apps folders are watched (inotify) and rescanned on change; without it
    /// they are read at start and by `lsctl rescan` only (file systems without inotify).
    public var watchAppsFolders = true
    public var deadlines: PhaseDeadlines
    public var maximumFrameLength: Int
    /// What one peer may make the daemon hold (connections, requests, callback addresses,
    /// queued replies) and how long it may stay silent.
    public var connectionLimits = ConnectionLimits()
    /// How long apps get to exit after their connection closes at shutdown, before SIGKILL.
    public var shutdownGrace: Duration
    /// When background apps are suspended, and how many apps may live at once.
    public var background = BackgroundPolicy()
    /// Opens delivered to one launched app and not yet answered, at most (the window). One
    /// at a time would cap an app at one open per daemon→app→daemon round trip; a window
    /// lets the daemon forward the next while the app works, as a bus forwards calls.
    public var maximumOpensInFlightPerApp = 16
    /// Whether a launched app finds its welcome and both launch methods on its connection at
    /// spawn, so one daemon→app→daemon crossing follows its hello instead of three (the
    /// same frames in the same order). Off: each is sent when its phase begins, for a
    /// runtime that reads its connection before it says hello (a protocol violation).
    public var prewriteLaunchMethods = true
    /// What happens to a callback that would not return to its caller.
    public var callbackPolicy: CallbackPolicy = .refuse
    /// How much the pasteboards may hold.
    public var pasteboardLimits = PasteboardLimits()
    /// Where launched apps' stdout and stderr go, and how large a log file may grow.
    public var appLogs = AppLogSettings()
    /// Whether the user's desktop entries are read (and watched) as handlers, and how
    /// desktop apps are launched.
    public var desktopEntries = DesktopEntrySettings()
    /// Whether `lsctl debug-stall` may block the loop (watchdog tests only). Set from the
    /// environment (`LAUNCHSERVICES_DEBUG_STALL=1`), never from a file.
    public var allowDebugStall = ProcessInfo.processInfo.environment["LAUNCHSERVICES_DEBUG_STALL"] == "1"

    public init(appsFolders: [String] = [DaemonConfiguration.defaultAppsFolder()], deadlines: PhaseDeadlines = PhaseDeadlines(), maximumFrameLength: Int = 1 << 20, shutdownGrace: Duration = .seconds(2)) {
        self.appsFolders = appsFolders
        self.deadlines = deadlines
        self.maximumFrameLength = maximumFrameLength
        self.shutdownGrace = shutdownGrace
    }

    /// `$XDG_DATA_HOME/launchservices/apps`, i.e. `~/.local/share/launchservices/apps`.
    public static func defaultAppsFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/launchservices/apps" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/launchservices/apps"
    }

    /// `$XDG_STATE_HOME/launchservices`, i.e. `~/.local/state/launchservices`.
    public static func defaultStateFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/launchservices" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/launchservices"
    }

    /// `$XDG_CONFIG_HOME/launchservices/launchservicesd.json`.
    public static func defaultConfigFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return config + "/launchservices/launchservicesd.json" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/launchservices/launchservicesd.json"
    }

    /// Reads a JSON configuration file over the defaults, naming the file and key on error.
    public static func load(file path: String) throws -> DaemonConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(path: path, problem: "cannot be read (missing or not readable)")
        }
        try rejectUnknownKeys(data, path: path)
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw ConfigurationError(path: path, problem: "key '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type: \(context.debugDescription)")
        } catch let DecodingError.dataCorrupted(context) {
            throw ConfigurationError(path: path, problem: "is not valid JSON: \(context.underlyingError.map { "\($0)" } ?? context.debugDescription)")
        }
        var config = DaemonConfiguration()
        if let folders = file.appsFolders { config.appsFolders = folders }
        func seconds(_ value: Double?, _ key: String, _ fallback: Duration) throws -> Duration {
            guard let value else { return fallback }
            return try File.seconds(value, key: key, upTo: 3600, path: path)
        }
        if let d = file.deadlines {
            config.deadlines = PhaseDeadlines(
                launch: try seconds(d.launch, "deadlines.launch", config.deadlines.launch),
                willFinishLaunching: try seconds(d.willFinishLaunching, "deadlines.willFinishLaunching", config.deadlines.willFinishLaunching),
                didFinishLaunching: try seconds(d.didFinishLaunching, "deadlines.didFinishLaunching", config.deadlines.didFinishLaunching),
                openURL: try seconds(d.openURL, "deadlines.openURL", config.deadlines.openURL))
        }
        if let limit = file.maximumFrameLength {
            guard limit >= 4096, limit <= 64 << 20 else { throw ConfigurationError(path: path, problem: "maximumFrameLength is \(limit); give bytes between 4096 and 67108864") }
            config.maximumFrameLength = limit
        }
        if let pending = file.maximumPendingOpensPerApp {
            guard pending >= 1, pending <= 10_000 else { throw ConfigurationError(path: path, problem: "maximumPendingOpensPerApp is \(pending); give 1 to 10000") }
            config.connectionLimits.maximumPendingRequests = pending
        }
        if let c = file.connections {
            config.connectionLimits = try ConnectionLimits.load(c, over: config.connectionLimits, path: path)
        }
        if let grace = file.shutdownGraceSeconds {
            config.shutdownGrace = try seconds(grace, "shutdownGraceSeconds", config.shutdownGrace)
        }
        if let grace = file.backgroundGraceSeconds {
            // 0 turns suspension off; otherwise seconds, like the deadlines.
            config.background.suspendAfter = grace == 0 ? nil : try seconds(grace, "backgroundGraceSeconds", .seconds(30))
        }
        if let watch = file.watchAppsFolders { config.watchAppsFolders = watch }
        if let prewrite = file.prewriteLaunchMethods { config.prewriteLaunchMethods = prewrite }
        if let live = file.maximumLiveApps {
            guard live >= 1, live <= 10_000 else { throw ConfigurationError(path: path, problem: "maximumLiveApps is \(live); give 1 to 10000") }
            config.background.maximumLiveApps = live
        }
        if let window = file.maximumOpensInFlightPerApp {
            guard window >= 1, window <= 256 else { throw ConfigurationError(path: path, problem: "maximumOpensInFlightPerApp is \(window); give 1 to 256") }
            config.maximumOpensInFlightPerApp = window
        }
        if let policy = file.callbackPolicy {
            guard let value = CallbackPolicy(rawValue: policy) else {
                throw ConfigurationError(path: path, problem: "callbackPolicy is '\(policy)'; give \(CallbackPolicy.allCases.map { "'\($0.rawValue)'" }.joined(separator: " or "))")
            }
            config.callbackPolicy = value
        }
        if let logs = file.appLogs {
            if let bytes = logs.maximumBytes {
                guard bytes >= 1024, bytes <= 1 << 30 else { throw ConfigurationError(path: path, problem: "appLogs.maximumBytes is \(bytes); give 1024 to 1073741824") }
                config.appLogs.maximumBytes = bytes
            }
            if let destination = logs.destination {
                guard AppLogSettings.destinations.contains(destination) else {
                    throw ConfigurationError(path: path, problem: "appLogs.destination is '\(destination)'; give \(AppLogSettings.destinations.map { "'\($0)'" }.joined(separator: " or "))")
                }
                config.appLogs.destination = destination
            }
        }
        if let desktop = file.desktopEntries {
            config.desktopEntries = try DesktopEntrySettings.load(desktop, over: config.desktopEntries, maximumFrameLength: config.maximumFrameLength, path: path)
        } else {
            config.desktopEntries.launch.stderrTailBytes = min(config.desktopEntries.launch.stderrTailBytes, config.maximumFrameLength / 2)
        }
        if let p = file.pasteboard {
            func limit(_ value: Int?, _ key: String, _ range: ClosedRange<Int>, _ fallback: Int) throws -> Int {
                guard let value else { return fallback }
                guard range.contains(value) else { throw ConfigurationError(path: path, problem: "pasteboard.\(key) is \(value); give \(range.lowerBound) to \(range.upperBound)") }
                return value
            }
            var limits = config.pasteboardLimits
            // One pasteboard travels in one frame, so it must fit a frame with room for the envelope.
            limits.maximumBytes = try limit(p.maximumBytes, "maximumBytes", 1...(config.maximumFrameLength - 4096), min(limits.maximumBytes, config.maximumFrameLength - 4096))
            limits.maximumTotalBytes = try limit(p.maximumTotalBytes, "maximumTotalBytes", limits.maximumBytes...(1 << 32), limits.maximumTotalBytes)
            limits.maximumPasteboards = try limit(p.maximumPasteboards, "maximumPasteboards", 1...100_000, limits.maximumPasteboards)
            limits.maximumItems = try limit(p.maximumItems, "maximumItems", 1...1024, limits.maximumItems)
            limits.maximumExpirySeconds = UInt64(try limit(p.maximumExpirySeconds, "maximumExpirySeconds", 1...(10 * 365 * 86400), Int(limits.maximumExpirySeconds)))
            limits.maximumOperationsPerConnection = try limit(p.maximumOperationsPerConnection, "maximumOperationsPerConnection", 1...1024, limits.maximumOperationsPerConnection)
            limits.maximumPasswordChecksWaiting = try limit(p.maximumPasswordChecksWaiting, "maximumPasswordChecksWaiting", 1...1024, limits.maximumPasswordChecksWaiting)
            config.pasteboardLimits = limits
        } else {
            config.pasteboardLimits.maximumBytes = min(config.pasteboardLimits.maximumBytes, config.maximumFrameLength - 4096)
        }
        return config
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public var path: String
    public var problem: String
    public var description: String { "configuration \(path) \(problem)" }
}
