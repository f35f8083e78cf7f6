import ArgumentParser
import Foundation
import LaunchServicesClient

/// `lsctl`: inspect and administer launchservicesd, in the manner of `systemctl`.
@main
struct LSCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsctl",
        abstract: "Inspect and administer launchservicesd.",
        subcommands: [Status.self, Apps.self, Schemes.self, Running.self, Register.self, Unregister.self, Default.self, Conflicts.self, Explain.self, Rescan.self, PasteboardCommand.self, ExportXDG.self, DebugStall.self])
}

/// Options every verb shares.
struct CommonOptions: ParsableArguments {
    @Flag(help: "Print the daemon's JSON document instead of text.")
    var json = false

    @Option(help: "Socket path (default: $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket).")
    var socket: String?

    /// Asks the daemon one query; exits 69 with a clear message when it cannot be reached.
    func query(_ topic: String) throws -> Any {
        do {
            let client = try LaunchServicesClient(socketPath: socket, program: "lsctl")
            defer { client.close() }
            let text = try client.query(topic)
            if json {
                print(text)
                throw ExitCode.success
            }
            return try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch let error as ClientError {
            StandardStreams.error("lsctl: \(error.description)\n")
            throw ExitCode(ExitCodes.unavailable)
        }
    }
}

extension CommonOptions {
    /// Runs a command; prints the daemon's JSON with --json, else hands the document back.
    /// A refusal prints the daemon's message and exits 1; an unreachable daemon exits 69.
    func command(_ verb: String, _ arguments: [String]) throws -> Any {
        do {
            let client = try LaunchServicesClient(socketPath: socket, program: "lsctl")
            defer { client.close() }
            let text = try client.command(verb, arguments)
            if json {
                print(text)
                throw ExitCode.success
            }
            return try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch let error as ClientError {
            StandardStreams.error("lsctl: \(error.description)\n")
            if case .refused = error { throw ExitCode.failure }
            throw ExitCode(ExitCodes.unavailable)
        }
    }
}

/// Prints an explanation document (explain, default) for a person.
func printExplanation(_ value: Any) {
    guard let e = value as? [String: Any] else { return }
    let app = e["app"] as? String
    print("\(e["url"] as? String ?? "?") → \(app ?? "no app")")
    print("  why: \(e["why"] as? String ?? "")")
    let claimants = (e["claimants"] as? [String]) ?? []
    if claimants.count > 1 { print("  also claimed by: \(claimants.filter { $0 != app }.joined(separator: ", "))") }
    if let chosen = e["userDefault"] as? String, chosen != app { print("  user default: \(chosen) (not a claimant now, so ignored)") }
}

struct Register: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Register the app bundle at PATH (kept across restarts until unregistered).")
    @OptionGroup var options: CommonOptions
    @Argument(help: "A bundle folder holding Info.plist and its executable.") var path: String

    func run() throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let answer = try options.command("register", [absolute]) as? [String: Any]
        let app = answer?["registered"] as? [String: Any]
        print("registered \(app?["id"] as? String ?? "?") (\(((app?["schemes"] as? [String]) ?? []).joined(separator: ", ")))")
    }
}

struct Unregister: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove the app with bundle id ID from the registry.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "The bundle id.") var id: String

    func run() throws {
        let answer = try options.command("unregister", [id]) as? [String: Any]
        print("unregistered \(id)")
        if let note = answer?["note"] as? String { print("note: \(note)") }
    }
}

struct Default: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set the app that opens SCHEME (like LSSetDefaultHandlerForURLScheme).",
        discussion: "lsctl default SCHEME shows the handler and why; lsctl default SCHEME ID makes ID the handler; --clear returns to the rule.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "The URL scheme.") var scheme: String
    @Argument(help: "The bundle id to make the default.") var id: String?
    @Flag(help: "Remove the user's default for SCHEME.") var clear = false

    func validate() throws {
        if clear && id != nil { throw ValidationError("give either a bundle id or --clear, not both") }
    }

    func run() throws {
        let answer = clear ? try options.command("clear-default", [scheme])
            : try options.command("default", [scheme] + (id.map { [$0] } ?? []))
        printExplanation(answer)
    }
}

struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Say which app would open URL, why, and who else claims its scheme.")
    @OptionGroup var options: CommonOptions
    @Argument(help: "The URL.") var url: String

    func run() throws {
        printExplanation(try options.command("explain", [url]))
    }
}

struct Rescan: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Re-read the apps folders now (the daemon also does when they change).")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let s = (try options.command("rescan", []) as? [String: Any]) ?? [:]
        for key in ["added", "changed", "removed"] {
            let ids = (s[key] as? [String]) ?? []
            print("\(key): \(ids.isEmpty ? "none" : ids.joined(separator: ", "))")
        }
        for line in (s["refused"] as? [String]) ?? [] { print("refused: \(line)") }
    }
}

struct Schemes: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every registered scheme, the app that opens it, and why.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let rows = (try options.query("schemes") as? [[String: Any]]) ?? []
        guard !rows.isEmpty else { return print("no schemes registered") }
        Table.print(header: ["SCHEME", "OPENS WITH", "WHY", "CLAIMANTS"], rows: rows.map {
            [$0["scheme"] as? String ?? "?", $0["app"] as? String ?? "?", $0["reason"] as? String ?? "?", "\(($0["claimants"] as? [String])?.count ?? 0)"]
        })
    }
}

struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List schemes claimed by several apps, and which one wins.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let rows = (try options.query("conflicts") as? [[String: Any]]) ?? []
        guard !rows.isEmpty else { return print("no contested schemes") }
        Table.print(header: ["SCHEME", "WINNER", "WHY", "CLAIMANTS"], rows: rows.map {
            [$0["scheme"] as? String ?? "?", $0["app"] as? String ?? "?", $0["reason"] as? String ?? "?", (($0["claimants"] as? [String]) ?? []).joined(separator: ", ")]
        })
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's state: socket, apps, running apps, opens served.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        guard let s = try options.query("status") as? [String: Any] else { throw ExitCode(ExitCodes.unavailable) }
        print("launchservicesd \(s["version"] ?? "?") (pid \(s["pid"] ?? "?")), up \(String(format: "%.1f", (s["uptimeSeconds"] as? Double) ?? 0)) s")
        print("  socket:     \(s["socket"] ?? "?")")
        print("  apps:       \(s["appsRegistered"] ?? 0) registered, \(s["schemesRegistered"] ?? 0) schemes")
        let suspended = (s["appsSuspended"] as? Int) ?? 0
        print("  running:    \(s["appsRunning"] ?? 0)\(suspended > 0 ? ", \(suspended) suspended" : "")\((s["frontmost"] as? String).map { " (frontmost: \($0))" } ?? "")")
        print("  opens:      \(s["opensServed"] ?? 0) served")
        print("  pasteboards: \(s["pasteboards"] ?? 0) holding items (\(s["persistentPasteboards"] ?? 0) persistent)")
        print("  folders:    \(((s["appsFolders"] as? [String]) ?? []).joined(separator: ", "))")
        let refused = (s["refusedBundles"] as? [String]) ?? []
        if !refused.isEmpty {
            print("  refused bundles:")
            for line in refused { print("    \(line)") }
        }
    }
}

struct Apps: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List registered apps and the schemes each declares.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let apps = (try options.query("apps") as? [[String: Any]]) ?? []
        guard !apps.isEmpty else {
            print("no apps registered")
            return
        }
        let rows = apps.map { app -> [String] in
            [app["id"] as? String ?? "?", ((app["schemes"] as? [String]) ?? []).joined(separator: ","), app["path"] as? String ?? ""]
        }
        Table.print(header: ["BUNDLE ID", "SCHEMES", "PATH"], rows: rows)
    }
}

struct Running: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List live apps with their lifecycle state; the frontmost is marked *.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        let apps = (try options.query("running") as? [[String: Any]]) ?? []
        guard !apps.isEmpty else {
            print("no apps running")
            return
        }
        let rows = apps.map { app -> [String] in
            [((app["frontmost"] as? Bool) == true ? "*" : " ") + (app["id"] as? String ?? "?"),
             app["state"] as? String ?? "?",
             (app["pid"] as? Int).map(String.init) ?? "-",
             (app["phase"] as? String) ?? "-",
             "\(app["pendingOpens"] ?? 0)"]
        }
        Table.print(header: [" BUNDLE ID", "STATE", "PID", "PHASE", "PENDING"], rows: rows)
    }
}

/// Blocks the daemon's event loop (only when it runs with LAUNCHSERVICES_DEBUG_STALL=1), so
/// a test can show systemd's watchdog restarting a stalled daemon.
struct DebugStall: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "debug-stall", abstract: "Stall the daemon's event loop (watchdog tests).", shouldDisplay: false)
    @OptionGroup var options: CommonOptions

    func run() throws {
        _ = try options.query("debug-stall")
        print("launchservicesd's event loop is now stalled")
    }
}

/// Left-aligned columns, as `systemctl list-units` prints them.
enum Table {
    static func print(header: [String], rows: [[String]]) {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let line = row.enumerated().map { $0.offset == row.count - 1 ? $0.element : $0.element.padding(toLength: widths[$0.offset] + 2, withPad: " ", startingAt: 0) }.joined()
            Swift.print(line)
        }
    }
}
