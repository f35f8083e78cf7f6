/// How the chosen desktop entry is launched for some URLs, decided as GLib (2.74) decides it:
/// over D-Bus when the entry is `DBusActivatable=true`, its file name is a bus name and a
/// session bus is there; otherwise by its Exec line, each process started as the user's.
///
/// GLib tries D-Bus only when it has a session bus, and runs the Exec line when it has none;
/// so does the daemon (`afterDBusFailure`). Once the bus is there, its answer stands: an app
/// the bus cannot start, or one that refuses the URL, is that failure, never a second launch
/// through Exec (which would start a second instance beside a broken one).
public enum DesktopOpenPlan: Sendable, Equatable {
    /// `org.freedesktop.Application.Open` to `busName`; `fallback` is the Exec launch used
    /// only when there is no session bus (nil: the entry's Exec line cannot be used).
    case dbus(busName: String, fallback: Result<DesktopLaunchRequest, DesktopLaunchFailure>)
    case exec(DesktopLaunchRequest)

    /// The plan for opening `urls` in `candidate` (the chosen or named entry), or why it
    /// cannot be launched at all.
    public static func plan(for candidate: DesktopCandidate, urls: [String]) -> Result<DesktopOpenPlan, DesktopLaunchFailure> {
        guard let file = candidate.entry, case .success(let entry) = file.content else {
            // A usable candidate always has its entry; a caller that passes another is told.
            return .failure(.exec(.empty))
        }
        let exec = request(id: candidate.id, file: file, entry: entry, urls: urls)
        if entry.dbusActivatable, case .success(let busName) = DBusActivation.busName(forEntryFile: file.path) {
            return .success(.dbus(busName: busName, fallback: exec))
        }
        return exec.map { .exec($0) }
    }

    /// The Exec launch of `entry` for `urls`: its line parsed by the specification's rules,
    /// expanded for the URLs (one process per URL for `%u`), never through a shell.
    static func request(id: String, file: DesktopLayout.EntryFile, entry: DesktopEntry, urls: [String]) -> Result<DesktopLaunchRequest, DesktopLaunchFailure> {
        guard let text = entry.exec else { return .failure(.exec(.empty)) }
        do {
            let line = try ExecLine(parsing: text)
            let commands = try line.commands(for: urls, values: ExecValues(icon: entry.values["Icon"]?.string, name: entry.name, location: file.path))
            return .success(DesktopLaunchRequest(desktopID: id, commands: commands, terminal: entry.terminal, workingDirectory: entry.workingDirectory,
                                                 entryPath: file.path, name: entry.name))
        } catch {
            return .failure(.exec(error))
        }
    }

    /// What to do when the D-Bus launch failed with `failure`: the Exec fallback when there is
    /// no session bus at all (as GLib does), else nothing (the failure is the outcome).
    public static func afterDBusFailure(_ failure: DBusCallFailure, fallback: Result<DesktopLaunchRequest, DesktopLaunchFailure>) -> DesktopLaunchRequest? {
        switch failure {
        case .noSessionBusAddress, .relativeRuntimeDirectory, .noSessionBus:
            if case .success(let request) = fallback { return request }
            return nil
        default:
            return nil
        }
    }
}
