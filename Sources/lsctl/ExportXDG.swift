import ArgumentParser
import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol

/// `lsctl export-xdg`: makes the freedesktop world send registered schemes to launchservicesd.
/// Writes a desktop entry declaring `x-scheme-handler/SCHEME` for every registered scheme, and
/// makes it the default for those schemes in `mimeapps.list`. The entry is named after the
/// daemon's bus name and says `DBusActivatable=true`, so GLib programs (`gio open`, every
/// `g_app_info_launch_default_for_uri`) call `org.freedesktop.Application.Open` on the
/// session bus and no process is started per URL; its `Exec=lsopen %u` is for what does not
/// activate over D-Bus (`xdg-open` outside a desktop environment runs it).
struct ExportXDG: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-xdg",
        abstract: "Export registered schemes as x-scheme-handler associations for xdg-open.",
        discussion: """
        Writes $XDG_DATA_HOME/applications/\(ExportXDG.desktopFile) and updates the \
        [Default Applications] of $XDG_CONFIG_HOME/mimeapps.list. The entry is \
        DBusActivatable: GLib programs (gio open) call launchservicesd on the session bus; \
        others run its Exec=lsopen %u. An export of an earlier version \
        (\(DesktopEntryCheck.earlierExportedEntryIDs.joined(separator: ", "))) is replaced: \
        its file removed, its defaults taken over. A scheme that already has \
        another default handler there is left alone (and reported) unless --force. \
        xdg-open reads these defaults only when DISPLAY or WAYLAND_DISPLAY is set; without \
        them it runs $BROWSER, so headless, set BROWSER to lsopen (export-xdg says so).
        """)

    /// One name, shared with the daemon, which never chooses this entry (`DesktopEntryCheck`).
    static let desktopFile = DesktopEntryCheck.exportedEntryID

    @OptionGroup var options: CommonOptions

    @Option(help: "The lsopen executable the desktop entry runs (default: the one beside lsctl).")
    var lsopen: String?

    @Flag(help: "Take over schemes that another application is the default for.")
    var force = false

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        let lsopenPath = lsopen ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("lsopen").path
        guard FileManager.default.isExecutableFile(atPath: lsopenPath) else {
            throw ValidationError("\(lsopenPath) is not an executable lsopen; pass --lsopen PATH")
        }
        // The schemes document is read, not printed: with --json, what is printed is this
        // command's own report, after the export.
        var quiet = options
        quiet.json = false
        let schemes = try quiet.query(.schemes, as: [SchemeReport].self).map(\.scheme).sorted()

        // mimeapps.list: keep everything, set our entries in [Default Applications].
        let mimeapps = configHome + "/mimeapps.list"
        var lines = ((try? String(contentsOfFile: mimeapps, encoding: .utf8)) ?? "").components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        var section = ""
        var existing: [String: (line: Int, value: String)] = [:]
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("[") { section = line; continue }
            guard section == "[Default Applications]", let eq = line.firstIndex(of: "=") else { continue }
            existing[String(line[..<eq]).trimmingCharacters(in: .whitespaces)] = (index, String(line[line.index(after: eq)...]))
        }
        var exported: [String] = []
        var skipped: [(scheme: String, current: String)] = []
        var additions: [String] = []
        // A default naming any export of ours (an earlier version's too) is ours to set.
        let ours = Set(DesktopEntryCheck.ownExportIDs)
        for scheme in schemes {
            let key = "x-scheme-handler/\(scheme)"
            if let current = existing[key] {
                if ours.contains(current.value) || force {
                    lines[current.line] = "\(key)=\(Self.desktopFile)"
                    exported.append(scheme)
                } else {
                    skipped.append((scheme, current.value))
                }
            } else {
                additions.append("\(key)=\(Self.desktopFile)")
                exported.append(scheme)
            }
        }
        // Entries of ours for schemes no longer registered are removed.
        let stale = Set(existing.filter { ours.contains($0.value.value) && !schemes.contains(String($0.key.dropFirst("x-scheme-handler/".count))) }.map(\.value.line))
        lines = lines.enumerated().filter { !stale.contains($0.offset) }.map(\.element)
        if let header = lines.firstIndex(of: "[Default Applications]") {
            lines.insert(contentsOf: additions, at: header + 1)
        } else if !additions.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines.append("[Default Applications]")
            lines.append(contentsOf: additions)
        }
        let mimeTypes = exported.map { "x-scheme-handler/\($0);" }.joined()
        let exec = lsopenPath.contains(" ") ? "\"\(lsopenPath)\"" : lsopenPath
        let desktop = """
            [Desktop Entry]
            Type=Application
            Name=Launch Services
            Comment=Open URLs with the app registered in launchservicesd
            Exec=\(exec) %u
            DBusActivatable=true
            NoDisplay=true
            Terminal=false
            MimeType=\(mimeTypes)

            """
        try FileManager.default.createDirectory(atPath: dataHome + "/applications", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: configHome, withIntermediateDirectories: true)
        try desktop.write(toFile: dataHome + "/applications/" + Self.desktopFile, atomically: true, encoding: .utf8)
        try (lines.joined(separator: "\n") + "\n").write(toFile: mimeapps, atomically: true, encoding: .utf8)
        let desktopPath = dataHome + "/applications/" + Self.desktopFile
        // The earlier export's file goes once its defaults name the new one.
        var replaced: [String] = []
        for earlier in DesktopEntryCheck.earlierExportedEntryIDs {
            let path = dataHome + "/applications/" + earlier
            guard FileManager.default.fileExists(atPath: path) else { continue }
            try FileManager.default.removeItem(atPath: path)
            replaced.append(path)
        }
        let headless = Self.headlessNote(environment, lsopen: lsopenPath)
        if options.json {
            var report: [String: Any] = [
                "desktopFile": desktopPath,
                "mimeapps": mimeapps,
                "exported": exported,
                "skipped": skipped.map { ["scheme": $0.scheme, "default": $0.current] },
                "replaced": replaced,
            ]
            if let headless { report["note"] = headless }
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            printJSON(String(decoding: data, as: UTF8.self))
            return
        }
        printEscaped("exported \(exported.count) scheme(s) to \(desktopPath): \(exported.joined(separator: ", "))")
        printEscaped("updated \(mimeapps)")
        for path in replaced { printEscaped("removed the earlier export \(path)") }
        for (scheme, current) in skipped { printEscaped("left alone: \(scheme) (default: \(current)); use --force to take it over") }
        if let headless { printEscaped("note: \(headless)") }
    }

    /// xdg-open (xdg-utils, outside a desktop environment) reads x-scheme-handler defaults
    /// only when `DISPLAY` or `WAYLAND_DISPLAY` is set; without either it runs `$BROWSER`
    /// (a `:`-separated list, tried in turn until one succeeds). Said when neither is set
    /// here, with what to do; nil in a graphical session.
    static func headlessNote(_ environment: [String: String], lsopen: String) -> String? {
        let display = ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
        guard !display else { return nil }
        return "neither DISPLAY nor WAYLAND_DISPLAY is set, and without them xdg-open ignores these defaults and runs $BROWSER instead; "
            + "to reach lsopen there, export BROWSER=\(lsopen) (or BROWSER=\(lsopen):www-browser to fall back to a browser for URLs no app handles), or run lsopen URL directly"
    }
}
