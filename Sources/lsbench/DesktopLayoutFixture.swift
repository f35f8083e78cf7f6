import Foundation
import LaunchServicesTesting

/// A user's desktop layout of `count` entries, written into private XDG folders for the
/// daemon's start rows, shaped like a distribution's: most entries in the system data folder
/// (`usr-share/applications`, a tenth of those in a `kde4/` subfolder, whose IDs get `kde4-`),
/// some in a second data folder and in the user's own, a `mimeinfo.cache` per folder when
/// `update-desktop-database` is given, and a `mimeapps.list` with defaults, added and removed
/// associations. Each entry is a real one's shape: `Name`, `GenericName`, `Comment` and
/// `Keywords` (a third of them translated into 40 languages, as large packages are, the rest
/// into three), `Icon`, `Categories`, several `MimeType`s (two schemes of its own, and for some
/// a shared scheme — `mailto`, `https`, `irc` — or file types), `Exec` with `%u` (`%U`, `%F`
/// for some) naming a program of its own on `PATH` (a link to the bench's C handler in
/// `bin/`, at the end of `PATH`, so lookups walk the whole `PATH`), `TryExec` for a fifth, a
/// program that is not installed for one in twenty (no handler, as in GLib), `Hidden` for one
/// in a hundred, and `[Desktop Action …]` groups for a quarter.
struct DesktopLayoutFixture {
    let folder: String
    let count: Int
    /// The daemon's environment: the caller's, with every `XDG_*` (but `XDG_RUNTIME_DIR`) and
    /// desktop-session variable replaced by the private folders, and `bin/` at the end of `PATH`.
    let environment: [String: String]
    /// A scheme only the last entry handles (in the system folder): handled once the whole
    /// layout is read.
    let lastScheme: String

    static let languages = ["af", "ar", "ast", "be", "bg", "bn", "ca", "cs", "da", "de", "el", "en_GB", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga",
                            "gl", "he", "hi", "hr", "hu", "id", "is", "it", "ja", "kk", "ko", "lt", "nb", "nl", "pl", "pt_BR", "ru", "sk", "sv", "zh_CN"]

    /// Writes the layout (`count` 0 writes the folders only: the empty start's layout).
    init(count: Int, into folder: String, handler: String, updateDesktopDatabase: String?) throws {
        self.folder = folder
        self.count = count
        let files = FileManager.default
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("XDG_") && key != "XDG_RUNTIME_DIR" { environment[key] = nil }
        for key in ["DESKTOP_SESSION", "KDE_FULL_SESSION", "GNOME_DESKTOP_SESSION_ID"] { environment[key] = nil }
        let (home, config, bin) = (folder + "/home", folder + "/config", folder + "/bin")
        let dataHome = home + "/.local/share", local = folder + "/usr-local-share", system = folder + "/usr-share"
        for path in [home, config, folder + "/config-dirs", bin, dataHome + "/applications", local + "/applications", system + "/applications/kde4"] {
            try files.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = dataHome
        environment["XDG_DATA_DIRS"] = local + ":" + system
        environment["XDG_CONFIG_HOME"] = config
        environment["XDG_CONFIG_DIRS"] = folder + "/config-dirs"
        environment["PATH"] = (environment["PATH"].map { $0 + ":" } ?? "") + bin
        self.environment = environment
        lastScheme = Self.scheme(count - 1, "a")
        // A link's relative target would be taken from bin/, not from where lsbench runs.
        let absoluteHandler = URL(fileURLWithPath: handler).standardizedFileURL.path

        for i in 0..<count {
            let program = Self.program(i)
            if i % 20 != 7 { try files.createSymbolicLink(atPath: bin + "/" + program, withDestinationPath: absoluteHandler) }
            let place: String
            switch i % 20 {
            case 0, 10: place = dataHome + "/applications/"
            case 5: place = local + "/applications/"
            case 3, 13: place = system + "/applications/kde4/"
            default: place = system + "/applications/"
            }
            let id = Self.id(i)
            let name = place.hasSuffix("kde4/") ? String(id.dropFirst("kde4-".count)) : id
            try Self.entry(i, log: folder + "/handler.log").write(toFile: place + name, atomically: false, encoding: .utf8)
        }
        try Self.mimeappsList(count: count).write(toFile: config + "/mimeapps.list", atomically: false, encoding: .utf8)
        if let updateDesktopDatabase, count > 0 {
            for applications in [dataHome, local, system].map({ $0 + "/applications" }) {
                let run = try ChildProcess.run(updateDesktopDatabase, [applications], environment: environment, scratch: folder, timeout: 60)
                guard run.status == 0 else { throw ProcessError("update-desktop-database \(applications) failed: \(run.stderr)") }
            }
        }
    }

    static func program(_ i: Int) -> String { "benchapp\(i)" }
    static func scheme(_ i: Int, _ suffix: String) -> String { "benchapp\(i)-\(suffix)" }

    /// The entry's desktop file ID (what `mimeapps.list` names).
    static func id(_ i: Int) -> String {
        (i % 20 == 3 || i % 20 == 13 ? "kde4-" : "") + "org.bench.App\(i).desktop"
    }

    static func entry(_ i: Int, log: String) -> String {
        let languages = i % 3 == 0 ? Self.languages : ["de", "fr", "es"]
        var lines = ["# Generated for the bench: entry \(i)", "[Desktop Entry]", "Version=1.5", "Type=Application"]
        func translated(_ key: String, _ value: String) {
            lines.append("\(key)=\(value)")
            lines += languages.map { "\(key)[\($0)]=\(value) (\($0))" }
        }
        translated("Name", "Bench App \(i)")
        translated("GenericName", "Benchmark Client")
        translated("Comment", "Opens bench links of kind \(i) and keeps them in a list you can search")
        translated("Keywords", "bench;links;client;app\(i);")
        var mimeTypes = ["x-scheme-handler/\(scheme(i, "a"))", "x-scheme-handler/\(scheme(i, "b"))"]
        if i % 50 == 1 { mimeTypes.append("x-scheme-handler/mailto") }
        if i % 40 == 2 { mimeTypes += ["x-scheme-handler/http", "x-scheme-handler/https", "text/html"] }
        if i % 30 == 4 { mimeTypes.append("x-scheme-handler/irc") }
        if i % 10 == 6 { mimeTypes += ["text/plain", "image/png", "application/pdf"] }
        let program = Self.program(i)
        let field = i % 10 == 8 ? "%U" : (i % 10 == 9 ? "%F" : "%u")
        lines += [
            "Icon=org.bench.App\(i)",
            "Exec=\(program) \(log) \(field)",
            "Terminal=false",
            "StartupNotify=true",
            "StartupWMClass=BenchApp\(i)",
            "Categories=Network;Utility;",
            "MimeType=" + mimeTypes.joined(separator: ";") + ";",
        ]
        if i % 5 == 1 { lines.append("TryExec=\(program)") }
        if i % 20 == 7 { lines.append("TryExec=\(program)") }  // not installed: no link in bin/
        if i % 100 == 11 { lines.append("Hidden=true") }
        if i % 10 == 5 { lines.append("NoDisplay=true") }
        if i % 4 == 0 {
            lines.append("Actions=new-window;private-window;")
            for (action, label) in [("new-window", "New Window"), ("private-window", "New Private Window")] {
                lines += ["", "[Desktop Action \(action)]"]
                translated("Name", label)
                lines.append("Exec=\(program) \(log) --\(action) %u")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Defaults for the shared schemes and some own ones, added and removed associations.
    static func mimeappsList(count: Int) -> String {
        guard count > 0 else { return "" }
        var defaults = ["[Default Applications]"]
        if count > 51 { defaults.append("x-scheme-handler/mailto=\(id(51));\(id(1));") }
        if count > 42 { defaults += ["x-scheme-handler/http=\(id(42));", "x-scheme-handler/https=\(id(42));", "text/html=\(id(42));"] }
        for i in stride(from: 3, to: count, by: 97) { defaults.append("x-scheme-handler/\(scheme(i, "b"))=\(id(i));") }
        var added = ["[Added Associations]"]
        for i in stride(from: 12, to: count, by: 89) { added.append("x-scheme-handler/\(scheme(i, "a"))=\(id((i + 1) % count));\(id(i));") }
        var removed = ["[Removed Associations]"]
        for i in stride(from: 24, to: count, by: 113) { removed.append("x-scheme-handler/\(scheme(i, "b"))=\(id(i));") }
        return (defaults + [""] + added + [""] + removed).joined(separator: "\n") + "\n"
    }
}
