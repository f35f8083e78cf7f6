/// The administrative plane (`lsctl`) as types. On the wire these are still `query(topic:)`
/// and `command(verb:arguments:)` with the same strings as before (PROTOCOL.md §6.7, §6.8,
/// §9): these enums only name them, so the daemon, `lsctl` and the tests agree on one list.

/// A refused administrative request: an unknown query topic, or an unknown verb or a
/// verb with the wrong number of arguments. `description` is the text the daemon sends
/// back in its `invalidRequest` failure.
public enum AdminRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownQuery(topic: String)
    case unknownCommand(verb: String, argumentCount: Int)

    /// The verb of a refused command when it is a known one (given the wrong number of
    /// arguments); `nil` for an unknown verb or a query.
    public var knownVerb: AdminVerb? {
        guard case .unknownCommand(let verb, _) = self else { return nil }
        return AdminVerb(rawValue: verb)
    }

    public var description: String {
        switch self {
        case .unknownQuery(let topic):
            return "unknown query '\(topic)'; known: \(AdminQuery.allCases.map(\.topic).joined(separator: ", "))"
        case .unknownCommand(let verb, let count):
            return "unknown command '\(verb)' with \(count) argument(s); known: \(AdminVerb.allCases.map(\.usage).joined(separator: ", "))"
        }
    }
}

/// The inspections: `query` topics, each answered with a JSON document (AdminReports.swift).
public enum AdminQuery: String, CaseIterable, Sendable, Equatable {
    /// `StatusReport`.
    case status
    /// `[AppReport]`.
    case apps
    /// `[SchemeReport]`: every registered scheme.
    case schemes
    /// `[SchemeReport]`: the schemes claimed by more than one app.
    case conflicts
    /// `[RunningReport]`.
    case running
    /// `[PasteboardReport]`.
    case pasteboards
    /// `[HistoryEntry]`: the recent opens, oldest first (added in 0.2; the user's tools only).
    case history

    /// The topic on the wire.
    public var topic: String { rawValue }

    /// The query a topic names; an unknown topic (including the test hook `debug-stall`,
    /// see `DebugHook`) is refused.
    public init(topic: String) throws(AdminRequestError) {
        guard let query = AdminQuery(rawValue: topic) else { throw .unknownQuery(topic: topic) }
        self = query
    }

    public var message: Message { .query(topic: topic) }
}

/// Test-only hooks that travel as query topics but are not part of the administrative
/// interface: the daemon refuses them (`notPermitted`) unless it was started with their
/// environment switch.
public enum DebugHook: String, CaseIterable, Sendable, Equatable {
    /// Blocks the daemon's event loop for good, so a test can watch systemd's watchdog
    /// restart it. Allowed only with `LAUNCHSERVICES_DEBUG_STALL=1` in the daemon's
    /// environment; answered `{"stalling": true}` just before the loop stops.
    case stall = "debug-stall"

    /// The topic on the wire.
    public var topic: String { rawValue }

    /// The hook a topic names, or `nil` for any other topic.
    public init?(topic: String) { self.init(rawValue: topic) }

    public var message: Message { .query(topic: topic) }
}

/// The command verbs, as spelled on the wire, without their arguments.
public enum AdminVerb: String, CaseIterable, Sendable, Equatable {
    case register
    case unregister
    case `default`
    case clearDefault = "clear-default"
    case explain
    case rescan
    /// Added in 0.2.
    case quit

    /// The spelling on the wire.
    public var verb: String { rawValue }

    /// How many arguments the verb takes.
    public var argumentCounts: ClosedRange<Int> {
        switch self {
        case .register, .unregister, .clearDefault, .explain, .quit: return 1...1
        case .default: return 1...2
        case .rescan: return 0...0
        }
    }

    /// The verb with its arguments, as error texts list it.
    public var usage: String {
        switch self {
        case .register: return "register PATH"
        case .unregister: return "unregister ID"
        case .default: return "default SCHEME [ID]"
        case .clearDefault: return "clear-default SCHEME"
        case .explain: return "explain URL"
        case .rescan: return "rescan"
        case .quit: return "quit ID"
        }
    }

    /// Whether only the user (never an app) may send it: registering, unregistering and
    /// defaults change which app opens what for every caller.
    public var userOnly: Bool {
        switch self {
        case .register, .unregister, .default, .clearDefault, .quit: return true
        case .explain, .rescan: return false
        }
    }
}

/// The administrative commands, each answered with a JSON document (AdminReports.swift).
public enum AdminCommand: Sendable, Equatable {
    /// `register PATH` (an absolute bundle folder path) → `RegisterReport`.
    case register(path: String)
    /// `unregister ID` → `UnregisterReport`.
    case unregister(id: String)
    /// `default SCHEME` → `ExplainReport` for `SCHEME:` (changes nothing).
    case showDefault(scheme: String)
    /// `default SCHEME ID` → `ExplainReport` for `SCHEME:` after the change.
    case setDefault(scheme: String, app: String)
    /// `clear-default SCHEME` → `ExplainReport` for `SCHEME:` after the change.
    case clearDefault(scheme: String)
    /// `explain URL` → `ExplainReport`.
    case explain(url: String)
    /// `rescan` → `RescanSummary`.
    case rescan
    /// `quit ID` → `QuitReport`, once the app has exited (added in 0.2).
    case quit(id: String)

    public var adminVerb: AdminVerb {
        switch self {
        case .register: return .register
        case .unregister: return .unregister
        case .showDefault, .setDefault: return .default
        case .clearDefault: return .clearDefault
        case .explain: return .explain
        case .rescan: return .rescan
        case .quit: return .quit
        }
    }

    /// The verb on the wire.
    public var verb: String { adminVerb.verb }

    /// The arguments on the wire, in order.
    public var arguments: [String] {
        switch self {
        case .register(let path): return [path]
        case .unregister(let id): return [id]
        case .showDefault(let scheme): return [scheme]
        case .setDefault(let scheme, let app): return [scheme, app]
        case .clearDefault(let scheme): return [scheme]
        case .explain(let url): return [url]
        case .rescan: return []
        case .quit(let id): return [id]
        }
    }

    /// The command a verb and its arguments name; an unknown verb or a wrong number of
    /// arguments is refused.
    public init(verb: String, arguments: [String]) throws(AdminRequestError) {
        guard let known = AdminVerb(rawValue: verb), known.argumentCounts.contains(arguments.count) else {
            throw .unknownCommand(verb: verb, argumentCount: arguments.count)
        }
        switch known {
        case .register: self = .register(path: arguments[0])
        case .unregister: self = .unregister(id: arguments[0])
        case .default: self = arguments.count == 2 ? .setDefault(scheme: arguments[0], app: arguments[1]) : .showDefault(scheme: arguments[0])
        case .clearDefault: self = .clearDefault(scheme: arguments[0])
        case .explain: self = .explain(url: arguments[0])
        case .rescan: self = .rescan
        case .quit: self = .quit(id: arguments[0])
        }
    }

    public var message: Message { .command(verb: verb, arguments: arguments) }
}

/// Any administrative request, as the daemon routes it.
public enum AdminRequest: Sendable, Equatable {
    case query(AdminQuery)
    case command(AdminCommand)
    /// A test-only hook (see `DebugHook`), kept apart from the queries.
    case debug(DebugHook)

    /// The request a `query` or `command` message carries; `nil` for any other message.
    /// An ill-formed one is a `failure` whose text the daemon sends back.
    public static func parse(_ message: Message) -> Result<AdminRequest, AdminRequestError>? {
        switch message {
        case .query(let topic):
            if let hook = DebugHook(topic: topic) { return .success(.debug(hook)) }
            return Result { () throws(AdminRequestError) in .query(try AdminQuery(topic: topic)) }
        case .command(let verb, let arguments):
            return Result { () throws(AdminRequestError) in .command(try AdminCommand(verb: verb, arguments: arguments)) }
        default:
            return nil
        }
    }

    public var message: Message {
        switch self {
        case .query(let query): return query.message
        case .command(let command): return command.message
        case .debug(let hook): return hook.message
        }
    }
}
