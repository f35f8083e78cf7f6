import ArgumentParser
import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol

/// `lsctl`: inspect and administer launchservicesd, in the manner of `systemctl`.
@main
struct LSCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsctl",
        abstract: "Inspect and administer launchservicesd.",
        // The real form, not ArgumentParser's `lsctl <subcommand>`: --help and the man page's
        // synopsis show it (scripts/generate-man-pages adds each verb's own usage after it).
        usage: "lsctl [--socket <socket>] [--json] <command> [<argument> ...]",
        discussion: "The options every verb takes, --socket PATH and --json, may also come before the verb (lsctl --socket PATH status). "
            + "Exit status: " + ExitCodes.lsctl.map { "\($0.status) \($0.meaning)" }.joined(separator: "; ") + ".",
        version: LaunchServicesVersion.current,
        subcommands: [Status.self, Apps.self, Schemes.self, Running.self, Register.self, Unregister.self, Default.self, Conflicts.self, Explain.self, Rescan.self, Quit.self, History.self, PasteboardCommand.self, ExportXDG.self, Logs.self, DebugStall.self])

    /// `--socket PATH` and `--json` may also come before the verb (`LeadingOptions`).
    static func main() {
        main(LeadingOptions.reordered(Array(CommandLine.arguments.dropFirst())))
    }
}

/// Options every verb shares.
struct CommonOptions: ParsableArguments {
    @Flag(help: "Print a JSON document instead of text: the daemon's answer, or the verb's own report.")
    var json = false

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    /// Asks the daemon one query; prints the daemon's JSON verbatim with --json, else decodes
    /// it as the query's report type. A refusal (an app asking for the history, say) prints
    /// the daemon's message and exits 1; an unreachable daemon exits 69.
    func query<Report: Decodable>(_ query: AdminQuery, as report: Report.Type) throws -> Report {
        try ask(query.topic, as: report) { try $0.query(query) }
    }

    /// Runs a command; prints the daemon's JSON with --json, else decodes it as the command's
    /// report type. A refusal prints the daemon's message and exits 1; an unreachable daemon exits 69.
    func command<Report: Decodable>(_ command: AdminCommand, as report: Report.Type) throws -> Report {
        try ask(command.verb, as: report) { try $0.command(command) }
    }

    /// A test-only hook; answered like a query, and refused like one (exit 1) when the
    /// daemon does not allow it.
    func debug(_ hook: DebugHook) throws -> DebugStallReport {
        try ask(hook.topic, as: DebugStallReport.self) { try $0.debug(hook) }
    }

    /// Every refusal exits 1 and everything else that fails 69, as lsctl's exit table says.
    private func ask<Report: Decodable>(_ what: String, as report: Report.Type,
                                        _ send: (LaunchServicesClient) throws -> String) throws -> Report {
        let text: String
        do {
            let client = try LaunchServicesClient(socketPath: socket, program: "lsctl")
            defer { client.close() }
            text = try send(client)
        } catch let error as ClientError {
            complain(error.description)
            if case .refused = error { throw ExitCode.failure }
            throw ExitCode(ExitCodes.unavailable)
        }
        if json {
            printJSON(text)
            let decided = (try? JSONDecoder().decode(report, from: Data(text.utf8))) as? DecidesExitStatus
            throw ExitCode(decided?.exitStatus ?? 0)
        }
        do {
            return try JSONDecoder().decode(report, from: Data(text.utf8))
        } catch {
            StandardStreams.error("lsctl: launchservicesd's answer to \(what) is not the \(report) this lsctl knows: \(error)\n")
            throw ExitCode(ExitCodes.unavailable)
        }
    }
}

struct Register: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Register the app bundle at PATH (kept across restarts until unregistered).",
        discussion: "A scheme the app declares that another app already opens (your default, or an app registered earlier) stays with that app; the answer names each such scheme and its holder.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "A bundle folder holding Info.plist and its executable.") var path: String

    func run() throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let report = try options.command(.register(path: absolute), as: RegisterReport.self)
        let app = report.registered
        printEscaped("registered \(app.id) (\(app.schemes.joined(separator: ", ")))")
        for held in report.heldByOthers {
            let since = held.claims.first { $0.app == held.app }?.since ?? "?"
            let why = held.reason == "userDefault" ? "your default"
                : held.handlerKind == SchemeResolution.Kind.desktop.rawValue ? "a desktop entry: desktop entries handled it first, since \(since)" : "registered first, since \(since)"
            printEscaped("  '\(held.scheme):' still opens with \(held.app) (\(why)); lsctl default \(held.scheme) \(app.id) to open it with \(app.id)")
        }
    }
}

struct Unregister: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove the app with bundle id ID from the registry.",
        discussion: "A running app is quit as lsctl quit would (its connection closes and it runs willTerminate; SIGTERM, then SIGKILL, after the grace); the answer does not wait for its exit.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "The bundle id.") var id: String

    func run() throws {
        let answer = try options.command(.unregister(id: id), as: UnregisterReport.self)
        printEscaped("unregistered \(id)")
        if let pid = answer.quitting { printEscaped("it was running (pid \(pid)): quitting it as lsctl quit does (willTerminate; SIGTERM, then SIGKILL, after the grace)") }
        if let note = answer.note { printEscaped("note: \(note)") }
    }
}

struct Default: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set the app that opens SCHEME (like LSSetDefaultHandlerForURLScheme).",
        discussion: "lsctl default SCHEME shows the handler and why; lsctl default SCHEME ID makes ID the handler; --clear returns to the rule. "
            + "ID is the bundle id of an app that declares SCHEME, or the desktop file ID of a desktop entry that can open it (org.example.Mail.desktop: "
            + "the one the desktop rules choose, or one they rank after it; lsctl explain SCHEME: lists them); anything else is refused, saying why.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "The URL scheme.") var scheme: String
    @Argument(help: "The bundle id, or desktop file ID, to make the default.") var id: String?
    @Flag(help: "Remove the user's default for SCHEME.") var clear = false

    func validate() throws {
        if clear && id != nil { throw ValidationError("give either an ID or --clear, not both") }
    }

    func run() throws {
        let command: AdminCommand = clear ? .clearDefault(scheme: scheme) : id.map { .setDefault(scheme: scheme, app: $0) } ?? .showDefault(scheme: scheme)
        printExplanation(try options.command(command, as: ExplainReport.self))
    }
}

struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say which app would open URL, why, and who else claims its scheme.",
        discussion: "Apps registered with launchservicesd and desktop entries are weighed by one rule (your default, else the earliest claim); "
            + "for desktop entries it names the file and line that chose one (~/.config/mimeapps.list:7 [Default Applications]) and why each other candidate lost.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "The URL.") var url: String

    func run() throws {
        printExplanation(try options.command(.explain(url: url), as: ExplainReport.self))
    }
}

struct Rescan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-read the apps folders now (the daemon also does when they change).",
        discussion: "A folder or bundle that could not be read now (out of file descriptors, an I/O error, permissions) is named; "
            + "nothing registered from it is withdrawn or changed, the daemon reads the folders again shortly, and lsctl exits \(ExitCodes.incomplete).")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let s = try options.command(.rescan, as: RescanSummary.self)
        for (key, ids) in [("added", s.added), ("changed", s.changed), ("removed", s.removed)] {
            printEscaped("\(key): \(ids.isEmpty ? "none" : ids.joined(separator: ", "))")
        }
        for line in s.refused { printEscaped("refused: \(line)") }
        guard s.isComplete else {
            for line in s.unreadable { printEscaped("unreadable: \(line)") }
            StandardStreams.error("lsctl: the rescan is incomplete: nothing registered from what could not be read was withdrawn or changed; launchservicesd reads the apps folders again shortly (or run lsctl rescan again)\n")
            throw ExitCode(ExitCodes.incomplete)
        }
    }
}

/// A report whose content decides lsctl's exit status, with --json too.
protocol DecidesExitStatus {
    var exitStatus: Int32 { get }
}

extension RescanSummary: DecidesExitStatus {
    var exitStatus: Int32 { isComplete ? 0 : ExitCodes.incomplete }
}

struct Schemes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every scheme an app declares or a desktop entry can open, the handler that opens it, and why.",
        discussion: "TYPE is native (an app registered with launchservicesd) or desktop (a desktop entry); KIND is the app's CFBundleURLName for the scheme.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let rows = try options.query(.schemes, as: [SchemeReport].self)
        guard !rows.isEmpty else { return printEscaped("no schemes registered") }
        Table.show(header: ["SCHEME", "OPENS WITH", "TYPE", "SINCE", "WHY", "CLAIMANTS", "KIND"], rows: rows.map { row in
            [row.scheme, row.app, handlerType(row.handlerKind), row.claims.first { $0.app == row.app }?.since ?? "", row.reason, "\(row.claimants.count)", row.kind ?? "-"]
        })
    }
}

struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List schemes several handlers can open (apps, desktop entries, or both): which one wins, why, and every claim with since when (earliest first).",
        discussion: "The desktop entries claim once, as one side: with the entry the desktop rules choose (DESKTOP CHOICE: the line that chose it, and the other entries that can open the scheme).")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let rows = try options.query(.conflicts, as: [SchemeReport].self)
        guard !rows.isEmpty else { return printEscaped("no contested schemes") }
        Table.show(header: ["SCHEME", "WINNER", "TYPE", "WHY", "CLAIMS (HANDLER SINCE, EARLIEST FIRST)", "DESKTOP CHOICE"], rows: rows.map { row in
            let claims = row.claims.isEmpty ? row.claimants.joined(separator: ", ")
                : row.claims.map { "\($0.app)\($0.isDesktop ? " (desktop)" : "") \($0.since)" }.joined(separator: ", ")
            var desktop = "-"
            if let chosen = row.desktopClaimants.first, let decidedBy = row.desktopDecidedBy {
                desktop = "\(chosen) by \(decidedBy.text)"
                let others = row.desktopClaimants.dropFirst()
                if !others.isEmpty { desktop += "; then \(others.joined(separator: ", "))" }
            }
            return [row.scheme, row.app, handlerType(row.handlerKind), row.reason, claims, desktop]
        })
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's state: socket, apps, running apps, opens served, desktop entries.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let s = try options.query(.status, as: StatusReport.self)
        printEscaped("launchservicesd \(s.version) (pid \(s.pid)), up \(String(format: "%.1f", s.uptimeSeconds)) s")
        printEscaped("  socket:     \(s.socket)")
        printEscaped("  apps:       \(s.appsRegistered) registered, \(s.schemesRegistered) schemes")
        printEscaped("  running:    \(s.appsRunning)\(s.appsSuspended > 0 ? ", \(s.appsSuspended) suspended" : "")\(s.frontmost.map { " (frontmost: \($0))" } ?? "")")
        printEscaped("  opens:      \(s.opensServed) served")
        printEscaped("  pasteboards: \(s.pasteboards) holding items (\(s.persistentPasteboards) persistent)")
        printEscaped("  folders:    \(s.appsFolders.joined(separator: ", "))")
        if let logs = s.appLogs { printEscaped("  app logs:   \(logs == "journal" ? "the journal (lsctl logs ID)" : logs)") }
        if !s.refusedBundles.isEmpty {
            printEscaped("  refused bundles:")
            for line in s.refusedBundles { printEscaped("    \(line)") }
        }
        for damaged in s.damagedDatabases ?? [] {
            printEscaped("  damaged database: \(damaged.file) (\(damaged.reason)), set aside unchanged as \(damaged.keptAs) at \(damaged.time)")
            printEscaped("    lost: \(damaged.lost)")
        }
        for problem in s.storageProblems ?? [] { printEscaped("  storage: \(problem)") }
        for place in s.unreadableInAppsFolders ?? [] { printEscaped("  unreadable: \(place); what it registered is kept as it was") }
        if let d = s.desktopEntries { printDesktopEntries(d) }
    }

    /// The desktop entries' part of the status.
    func printDesktopEntries(_ d: DesktopEntriesReport) {
        guard d.enabled else { return printEscaped("  desktop entries: not read (desktopEntries.enabled is false)") }
        guard d.ready else { return printEscaped("  desktop entries: the first read is under way") }
        let watched = d.foldersWatched > 0 ? "\(d.foldersWatched) folders watched" : "not watched"
        printEscaped("  desktop entries: \(d.entries) entries, \(d.schemesHandled) schemes handled; read \(d.generation == 1 ? "once" : "\(d.generation) times"), last at \(d.lastRead ?? "-"); \(watched)")
        printEscaped("    folders: \(d.folders.joined(separator: ", "))")
        for problem in d.problems { printEscaped("    problem: \(problem)") }
        if d.moreProblems > 0 { printEscaped("    and \(d.moreProblems) more problems (see the daemon's log)") }
    }
}

struct Apps: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List registered apps, the schemes each declares, and under which CFBundleURLName.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let apps = try options.query(.apps, as: [AppReport].self)
        guard !apps.isEmpty else {
            printEscaped("no apps registered")
            return
        }
        let rows = apps.map { app -> [String] in [app.id, app.schemes.joined(separator: ","), app.path, Self.urlTypes(app)] }
        Table.show(header: ["BUNDLE ID", "SCHEMES", "PATH", "URL TYPES (NAME: SCHEMES)"], rows: rows)
    }

    /// `com.acme.todolist: todolist; (unnamed): xyz`, or `-` when none is known.
    static func urlTypes(_ app: AppReport) -> String {
        guard !app.urlTypes.isEmpty else { return "-" }
        return app.urlTypes.map { "\($0.name ?? "(unnamed)"): \($0.schemes.joined(separator: ","))" }.joined(separator: "; ")
    }
}

struct Running: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List live apps with their lifecycle state; the frontmost is marked *. Desktop apps the daemon started are listed while they live.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let apps = try options.query(.running, as: [RunningReport].self)
        guard !apps.isEmpty else {
            printEscaped("no apps running")
            return
        }
        let rows = apps.map { app -> [String] in
            [(app.frontmost ? "*" : " ") + app.id, app.state, app.pid.map { String($0) } ?? "-", app.phase ?? "-", "\(app.pendingOpens)", app.kind ?? HandlerKind.native.rawValue]
        }
        // Desktop apps are listed by desktop file ID while the process the daemon started lives.
        Table.show(header: [" BUNDLE ID", "STATE", "PID", "PHASE", "PENDING", "KIND"], rows: rows)
    }
}

/// Blocks the daemon's event loop (only when it runs with LAUNCHSERVICES_DEBUG_STALL=1), so
/// a test can show systemd's watchdog restarting a stalled daemon.
struct DebugStall: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "debug-stall", abstract: "Stall the daemon's event loop (watchdog tests).", shouldDisplay: false)
    @OptionGroup var options: CommonOptions

    func run() throws {
        _ = try options.debug(.stall)
        printEscaped("launchservicesd's event loop is now stalled")
    }
}

/// `native` (an app registered with launchservicesd) or `desktop` (a desktop entry); `native`
/// for an older daemon's rows, which are all apps.
func handlerType(_ kind: String?) -> String {
    kind ?? SchemeResolution.Kind.native.rawValue
}

/// Left-aligned columns, as `systemctl list-units` prints them.
enum Table {
    static func show(header: [String], rows: [[String]]) {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let line = row.enumerated().map { $0.offset == row.count - 1 ? $0.element : $0.element.padding(toLength: widths[$0.offset] + 2, withPad: " ", startingAt: 0) }.joined()
            printEscaped(line)
        }
    }
}
