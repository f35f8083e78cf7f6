/// Whether a desktop entry file can be a handler, and if not, why.
///
/// `glibDefect` is GLib 2.74's test when it loads an entry to use it: a key file whose first
/// group is `[Desktop Entry]`, `Type=Application`, and if `TryExec` is set its program found,
/// and if `Exec` is set the line splits into words (`ShellWords`) and its first word is found —
/// both checked when both are set. An entry GLib cannot load hides no less: the same ID in a
/// later folder is then tried (GLib's fall-through).
///
/// `launchServicesDefect` adds what this daemon refuses beyond GLib (each a
/// `DesktopDeviation`): a `Hidden` entry (the Desktop Entry spec: hidden means deleted), an
/// entry with nothing to run (no `Exec` and not `DBusActivatable`), and the entry
/// `lsctl export-xdg` writes for `lsopen` (it would send the URL back here).
public enum EntryDefect: Sendable, Equatable, CustomStringConvertible {
    case unreadable(DesktopEntryError)
    case firstGroupIsNot(String)
    case notApplication(type: String?, line: Int?)
    /// `key` is `TryExec` or `Exec`; `searchPath` is the PATH looked on.
    case programNotFound(program: String, key: String, line: Int, searchPath: String)
    case execDoesNotSplit(ShellWords.Failure, line: Int)
    case hidden(line: Int)
    case nothingToRun
    case ownExport

    /// A stable name for machine-readable output (`--json`).
    public var name: String {
        switch self {
        case .unreadable: return "unreadable"
        case .firstGroupIsNot: return "firstGroupIsNotDesktopEntry"
        case .notApplication: return "notApplication"
        case .programNotFound: return "programNotFound"
        case .execDoesNotSplit: return "execDoesNotSplit"
        case .hidden: return "hidden"
        case .nothingToRun: return "nothingToRun"
        case .ownExport: return "ownExport"
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let error):
            return "the file \(error)"
        case .firstGroupIsNot(let group):
            return "its first group is [\(TerminalText.escapingControls(group))], not [Desktop Entry]"
        case .notApplication(let type, let line):
            let written = type.map { "Type=\(TerminalText.quoted($0))" } ?? "no Type"
            return "\(written)\(line.map { " (line \($0))" } ?? ""), not Type=Application"
        case .programNotFound(let program, let key, let line, let searchPath):
            let place = program.contains("/") ? "is not an executable file" : "is not on PATH (\(TerminalText.escapingControls(searchPath)))"
            return "its program \(TerminalText.quoted(program)) (\(key), line \(line)) \(place)"
        case .execDoesNotSplit(let failure, let line):
            return "its Exec line (line \(line)) does not split into words: \(failure)"
        case .hidden(let line):
            return "Hidden=true (line \(line)): the entry is deleted"
        case .nothingToRun:
            return "no Exec and not DBusActivatable: nothing to run"
        case .ownExport:
            return "it is the entry lsctl export-xdg writes for lsopen, which would send the URL back here"
        }
    }
}

/// The checks themselves.
public enum DesktopEntryCheck {
    /// The ID of the entry `lsctl export-xdg` writes: the daemon's bus name as a file name, so
    /// GLib, finding it `DBusActivatable`, calls the daemon on the session bus
    /// (`org.freedesktop.Application.Open`) rather than running its `Exec=lsopen %u`.
    public static let exportedEntryID = LaunchServicesBus.name + ".desktop"
    /// The IDs earlier versions of `lsctl export-xdg` wrote: never chosen either (a user who
    /// exported before may still have one), and replaced by the next export.
    public static let earlierExportedEntryIDs = ["swift-launch-services-lsopen.desktop"]
    /// Every ID an export of ours has had.
    public static let ownExportIDs = [exportedEntryID] + earlierExportedEntryIDs
    /// The program that entry runs: any entry running it would send the URL back here.
    public static let exportedProgram = "lsopen"

    /// GLib's load test; nil when GLib would load (and so use) the entry.
    public static func glibDefect(_ file: DesktopLayout.EntryFile, programs: [String: ProgramLookup], searchPath: String) -> EntryDefect? {
        let entry: DesktopEntry
        switch file.content {
        case .failure(let error): return .unreadable(error)
        case .success(let read): entry = read
        }
        guard entry.startGroup == DesktopEntry.group else { return .firstGroupIsNot(entry.startGroup) }
        guard entry.type == "Application" else { return .notApplication(type: entry.type, line: entry.line(of: "Type")) }
        if let tryExec = entry.tryExec, !tryExec.isEmpty, !isFound(tryExec, programs) {
            return .programNotFound(program: tryExec, key: "TryExec", line: entry.line(of: "TryExec") ?? 0, searchPath: searchPath)
        }
        if let exec = entry.exec, !exec.isEmpty {
            let line = entry.line(of: "Exec") ?? 0
            switch ShellWords.program(of: exec) {
            case .failure(let failure):
                return .execDoesNotSplit(failure, line: line)
            case .success(let program):
                if isFound(program, programs) { break }
                return .programNotFound(program: program, key: "Exec", line: line, searchPath: searchPath)
            }
        }
        return nil
    }

    /// A program the edge did not look up counts as not found.
    static func isFound(_ program: String, _ programs: [String: ProgramLookup]) -> Bool {
        if case .found? = programs[program] { return true }
        return false
    }

    /// What this daemon refuses beyond GLib, under `rules`; nil when it refuses nothing more.
    public static func extraDefect(_ file: DesktopLayout.EntryFile, rules: DesktopRules) -> EntryDefect? {
        guard case .success(let entry) = file.content else { return nil }
        if rules.contains(.hiddenIsNoHandler), entry.hidden { return .hidden(line: entry.line(of: "Hidden") ?? 0) }
        if rules.contains(.ownExportNeverChosen), isOwnExport(id: file.id, entry: entry) { return .ownExport }
        if rules.contains(.nothingToRunIsNoHandler), (entry.exec ?? "").isEmpty, !entry.dbusActivatable { return .nothingToRun }
        return nil
    }

    /// Whether the entry is `lsctl export-xdg`'s (by its ID, today's or an earlier one) or runs
    /// `lsopen` (by any path). By ID also when it runs nothing: a `DBusActivatable` entry
    /// named after the daemon's bus name would be activated on the daemon itself.
    public static func isOwnExport(id: String, entry: DesktopEntry) -> Bool {
        if ownExportIDs.contains(id) { return true }
        guard let exec = entry.exec, case .success(let program) = ShellWords.program(of: exec) else { return false }
        return program.split(separator: "/").last.map(String.init) == exportedProgram
    }

    /// The programs to look up for `entry` (the edge answers them all before a choice).
    public static func programsToFind(_ entry: DesktopEntry) -> [String] {
        var programs: [String] = []
        if let tryExec = entry.tryExec, !tryExec.isEmpty { programs.append(tryExec) }
        if let exec = entry.exec, !exec.isEmpty, case .success(let program) = ShellWords.program(of: exec) { programs.append(program) }
        return programs
    }
}
