import ArgumentParser
import Foundation
import LaunchServicesClient

/// `lsctl`: inspect and administer launchservicesd, in the manner of `systemctl`.
@main
struct LSCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsctl",
        abstract: "Inspect and administer launchservicesd.",
        subcommands: [Status.self, Apps.self, Running.self, DebugStall.self])
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

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's state: socket, apps, running apps, opens served.")
    @OptionGroup var options: CommonOptions

    func run() throws {
        guard let s = try options.query("status") as? [String: Any] else { throw ExitCode(ExitCodes.unavailable) }
        print("launchservicesd \(s["version"] ?? "?") (pid \(s["pid"] ?? "?")), up \(String(format: "%.1f", (s["uptimeSeconds"] as? Double) ?? 0)) s")
        print("  socket:     \(s["socket"] ?? "?")")
        print("  apps:       \(s["appsRegistered"] ?? 0) registered, \(s["schemesRegistered"] ?? 0) schemes")
        print("  running:    \(s["appsRunning"] ?? 0)\((s["frontmost"] as? String).map { " (frontmost: \($0))" } ?? "")")
        print("  opens:      \(s["opensServed"] ?? 0) served")
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
