import Foundation
import LaunchServicesTesting

/// SplitMix64: the same seed gives the same layouts on every run (with this toolchain's
/// `random(in:using:)`), so a failure can be replayed from the seed the test prints.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
    mutating func some<T>(_ items: [T], probability: Double) -> [T] { items.filter { _ in chance(probability) } }
}

/// One generated XDG layout: private data, config and bin folders under `root`, an
/// environment naming them, and the schemes to ask about. Files are written in two steps:
/// `files` before update-desktop-database runs on `cacheFolders`, `afterCache` after it (to
/// make a cache out of date), and `handWrittenCaches` replace what it wrote.
struct GeneratedLayout {
    let index: Int
    let root: String
    var environment: [String: String] = [:]
    var schemes: [String] = []
    var files: [(path: String, text: String)] = []
    var executables: [(path: String, mode: mode_t)] = []
    var cacheFolders: [String] = []
    var afterCache: [(path: String, text: String)] = []
    var handWrittenCaches: [(path: String, text: String)] = []
    /// Links made before the cache: (link, target).
    var links: [(path: String, target: String)] = []
    /// What the generator made each entry file (by path), to corroborate a deviation the
    /// test is told made the difference.
    var marks: [String: Set<EntryMark>] = [:]
    /// Some data folder has no cache, or one made out of date or written by hand.
    var irregularCache = false
    /// Some data folder's mimeapps.list removes associations.
    var dataFolderRemoval = false

    func writeFiles() throws {
        var made = Set<String>()
        for (path, text) in files { try Self.write(text, to: path, made: &made) }
        for (path, mode) in executables {
            try Self.write("#!/bin/sh\nexit 0\n", to: path, made: &made)
            chmod(path, mode)
        }
        for folder in cacheFolders { try Self.makeFolder(folder, made: &made) }
        for (path, target) in links {
            try Self.makeFolder(String(path[..<path.lastIndex(of: "/")!]), made: &made)
            guard symlink(target, path) == 0 else { throw ProcessError("cannot link \(path): \(String(cString: strerror(errno)))") }
        }
    }

    func writeAfterCache() throws {
        var made = Set<String>()
        for (path, text) in afterCache + handWrittenCaches { try Self.write(text, to: path, made: &made) }
    }

    /// Plain POSIX: FileManager spent most of the test's time making thousands of small files.
    static func write(_ text: String, to path: String, made: inout Set<String>) throws {
        try makeFolder(String(path[..<path.lastIndex(of: "/")!]), made: &made)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ProcessError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw ProcessError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func makeFolder(_ path: String, made: inout Set<String>) throws {
        guard !made.contains(path), path.count > 1 else { return }
        if mkdir(path, 0o755) != 0 {
            if errno == ENOENT {
                try makeFolder(String(path[..<path.lastIndex(of: "/")!]), made: &made)
                guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw ProcessError("cannot make \(path)") }
            } else if errno != EEXIST {
                throw ProcessError("cannot make \(path): \(String(cString: strerror(errno)))")
            }
        }
        made.insert(path)
    }

    /// Every file under `root` with its text, for a failure message.
    func dump() -> String {
        guard let paths = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] else { return "" }
        var out = "environment: " + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + "\n"
        for path in paths.sorted() {
            var isFolder: ObjCBool = false
            let full = root + "/" + path
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            let text = (try? String(contentsOfFile: full, encoding: .utf8)) ?? "(not UTF-8)"
            out += "--- \(path)\n\(text)\n"
        }
        return out
    }
}

/// What an entry file was made to be.
enum EntryMark: Hashable {
    /// `Hidden=true` or `Hidden=1` (what GLib reads as true).
    case hidden
    /// No `Exec` (or an empty one), and not `DBusActivatable`.
    case nothingToRun
    /// The entry `lsctl export-xdg` writes, or one running lsopen.
    case runsLsopen
}

/// Generates the layouts of the differential test: entries in several data folders and
/// subfolders, the same ID in several folders, mimeapps.list at every level (defaults with
/// lists of several IDs, uninstalled and missing ones; added and removed associations),
/// desktop-specific lists, defaults.list, caches current, missing and out of date, programs
/// installed or not (TryExec and Exec), Hidden, NoDisplay, other Types, malformed files, and
/// the entry `lsctl export-xdg` writes.
enum XDGLayoutGenerator {
    static let schemePool = ["lsdweb", "lsdmail", "lsd-chat", "lsd.tor", "lsd+x"]
    static let idPool = ["alpha.desktop", "beta.desktop", "Gamma.desktop", "org.example.Mail.desktop", "vendor-app.desktop",
                         "kde-tool.desktop", "zeta.desktop", "linked-shared.desktop"]
    /// The entry `lsctl export-xdg` writes today (the bus name's file) and the one it wrote before.
    static let ownExports = ["org.swift_launch_services.LaunchServices.desktop", "swift-launch-services-lsopen.desktop"]
    static let installed = ["prog-a", "prog-b", "prog-c", "prog-d"]
    static let desktops = ["", "GNOME", "KDE", "ubuntu:GNOME", "X-Cinnamon", "GNOME:bad/part:KDE", "LXQt:XFCE", "::gnome"]

    static func layout(index: Int, seed: UInt64, under scratch: String) -> GeneratedLayout {
        var random = SeededGenerator(seed: seed ^ (UInt64(index) &* 0xD129_0B0C_A1E5_1A3D))
        var layout = GeneratedLayout(index: index, root: scratch + "/layout-\(index)")
        let root = layout.root
        let home = root + "/home"
        layout.schemes = random.some(schemePool, probability: 0.7)
        if layout.schemes.isEmpty { layout.schemes = [random.pick(schemePool)] }

        // Programs: a private bin (and sometimes a second one), one file without execute bits.
        let bin = root + "/bin", bin2 = root + "/bin2"
        layout.executables = installed.map { (bin + "/" + $0, 0o755) } + [(bin + "/prog-noexec", 0o644), (bin + "/lsopen", 0o755)]
        var path = [bin]
        if random.chance(0.3) {
            layout.executables.append((bin2 + "/prog-e", 0o755))
            path.append(bin2)
        }
        if random.chance(0.1) { path.insert(root + "/no-such-bin", at: 0) }
        layout.environment["PATH"] = path.joined(separator: ":")
        layout.environment["HOME"] = home
        layout.environment["LC_ALL"] = "C.UTF-8"

        // Data folders: XDG_DATA_HOME (or its default under HOME), 1–3 data dirs, sometimes
        // repeated, with an empty component, or not there.
        let dataHome = random.chance(0.85) ? root + "/data-home" : home + "/.local/share"
        if dataHome.hasPrefix(root + "/data-home") { layout.environment["XDG_DATA_HOME"] = random.chance(0.1) ? dataHome + "/" : dataHome }
        var dataDirs = (1...3).map { root + "/data\($0)" }.shuffled(using: &random)
        dataDirs = Array(dataDirs.prefix(Int.random(in: 1...3, using: &random)))
        var dataDirList = dataDirs
        if random.chance(0.1) { dataDirList.append(dataDirs[0]) }
        if random.chance(0.1) { dataDirList.insert("", at: 1) }
        if random.chance(0.05) { dataDirList.append(root + "/not-there") }
        // Now and then empty: the default /usr/local/share:/usr/share, this machine's own.
        layout.environment["XDG_DATA_DIRS"] = random.chance(0.03) ? "" : dataDirList.joined(separator: ":")

        let configHome = random.chance(0.85) ? root + "/config-home" : home + "/.config"
        if configHome.hasPrefix(root + "/config-home") { layout.environment["XDG_CONFIG_HOME"] = configHome }
        let configDirs = Array([root + "/cfg1", root + "/cfg2"].prefix(Int.random(in: 0...2, using: &random)))
        layout.environment["XDG_CONFIG_DIRS"] = random.chance(0.03) ? "" : configDirs.isEmpty ? root + "/no-config" : configDirs.joined(separator: ":")
        let desktop = random.pick(desktops)
        if !desktop.isEmpty || random.chance(0.5) { layout.environment["XDG_CURRENT_DESKTOP"] = desktop }
        let listDesktops = ["gnome", "kde", "ubuntu", "x-cinnamon", "xfce", "lxqt"]

        let allFolders = [(dataHome + "/applications", true)] + dataDirs.map { ($0 + "/applications", true) }
            + ([configHome] + configDirs).map { ($0, false) }
        for (folder, isData) in allFolders {
            if isData { entries(in: folder, isHome: folder.hasPrefix(dataHome), layout: &layout, random: &random) }
            if random.chance(0.55) {
                let text = mimeapps(layout.schemes, random: &random, full: true)
                if isData && text.contains("[Removed Associations]") { layout.dataFolderRemoval = true }
                layout.files.append((folder + "/mimeapps.list", text))
            }
            for name in listDesktops where random.chance(0.12) {
                layout.files.append((folder + "/\(name)-mimeapps.list", mimeapps(layout.schemes, random: &random, full: random.chance(0.3))))
            }
            if isData && random.chance(0.15) { layout.files.append((folder + "/defaults.list", mimeapps(layout.schemes, random: &random, full: false))) }
        }
        return layout
    }

    /// The entries of one `applications` folder, and its cache (current, missing, out of date
    /// or hand-written in an order of its own).
    static func entries(in folder: String, isHome: Bool, layout: inout GeneratedLayout, random: inout SeededGenerator) {
        var placed: [(relative: String, id: String)] = []
        for id in idPool where random.chance(0.45) {
            switch id {
            case "vendor-app.desktop":
                if random.chance(0.5) { placed.append(("vendor/app.desktop", id)) } else { placed.append((id, id)) }
                if random.chance(0.08) { placed.append(placed.last!.relative == id ? ("vendor/app.desktop", id) : (id, id)) }
            case "kde-tool.desktop":
                placed.append((random.chance(0.6) ? "kde/tool.desktop" : id, id))
            default:
                placed.append((id, id))
            }
        }
        if isHome && random.chance(0.12) {
            let own = random.pick(ownExports)
            placed.append((own, own))
        }
        if random.chance(0.06) {
            // A linked subfolder (links are followed): its entry's ID is linked-shared.desktop.
            let shared = layout.root + "/shared-\(layout.links.count)"
            layout.links.append((folder + "/linked", shared))
            let (text, marks) = entry(id: "linked-shared.desktop", schemes: layout.schemes, root: layout.root, random: &random)
            layout.files.append((shared + "/shared.desktop", text))
            layout.marks[folder + "/linked/shared.desktop"] = marks
        }
        for (relative, id) in placed {
            let (text, marks) = entry(id: id, schemes: layout.schemes, root: layout.root, random: &random)
            layout.files.append((folder + "/" + relative, text))
            layout.marks[folder + "/" + relative] = marks
        }
        let cacheChance = random.pick([0.0, 0.85, 0.85, 1.0])
        if random.chance(cacheChance) {
            layout.cacheFolders.append(folder)
            if random.chance(0.12) {
                // Out of date: a new entry the cache does not list, or one whose MimeType changed.
                let id = random.pick(["late.desktop", "alpha.desktop", "zeta.desktop"])
                let (text, marks) = entry(id: id, schemes: layout.schemes, root: layout.root, random: &random)
                layout.afterCache.append((folder + "/" + id, text))
                layout.marks[folder + "/" + id] = marks
                layout.irregularCache = true
            }
            if random.chance(0.05) {
                layout.irregularCache = true
                let ids = placed.map(\.id).shuffled(using: &random)
                let lines = layout.schemes.map { "x-scheme-handler/\($0)=" + ids.map { $0 + ";" }.joined() }
                layout.handWrittenCaches.append((folder + "/mimeinfo.cache", "[MIME Cache]\n" + lines.joined(separator: "\n") + "\n"))
            }
        } else {
            layout.irregularCache = true
        }
    }

    static func entry(id: String, schemes: [String], root: String, random: inout SeededGenerator) -> (String, Set<EntryMark>) {
        var lines: [String] = []
        var marks: Set<EntryMark> = []
        var runs = ""
        if random.chance(0.04) { lines += ["[Other Group]", "X-Key=1", ""] }
        lines.append(random.chance(0.02) ? "# a comment\n[Desktop Entry]" : "[Desktop Entry]")
        lines.append(random.pick(["Type=Application", "Type=Application", "Type=Application", "Type=Application", "Type=Application",
                                  "Type=Application", "Type=Application", "Type=Application", "Type=Link", "Type=Directory",
                                  "Type=Application ", "Type = Application", "Name=NoType"]))
        lines.append("Name=\(id)")
        lines.append("Name[de]=\(id) auf Deutsch")
        if ownExports.contains(id) {
            lines.append("Exec=\(root)/bin/lsopen %u")
            marks.insert(.runsLsopen)
        } else {
            let usual = ["prog-a %u", "prog-b %U", "prog-c", "prog-d --new %u", "prog-e %u", "\(root)/bin/prog-a %u", "'prog-b' --flag %u",
                         "\"prog-c\" %u", "prog-a\\s%u", "env prog-a %u", "prog-a #comment"]
            let unusual = ["prog-missing %u", "\"prog-a %u", "prog-noexec %u", "", "NONE", "# prog-a", "\(root)/bin/lsopen %u", "prog-a #"]
            let exec = random.chance(0.75) ? random.pick(usual) : random.pick(unusual)
            if exec != "NONE" { lines.append("Exec=\(exec)") }
            if exec.contains("/bin/lsopen") { marks.insert(.runsLsopen) }
            runs = exec == "NONE" ? "" : exec
        }
        if random.chance(0.2) { lines.append("TryExec=" + random.pick(["prog-a", "prog-missing", "prog-noexec", "\(root)/bin/prog-b", ""])) }
        if random.chance(0.08) {
            let hidden = random.pick(["Hidden=true", "Hidden=true", "Hidden=True", "Hidden=1", "Hidden=false"])
            lines.append(hidden)
            if hidden == "Hidden=true" || hidden == "Hidden=1" { marks.insert(.hidden) }
        }
        if random.chance(0.1) { lines.append("NoDisplay=true") }
        if random.chance(0.05) {
            lines.append("DBusActivatable=true")
        } else if runs.isEmpty && !ownExports.contains(id) {
            marks.insert(.nothingToRun)
        }
        if random.chance(0.9) {
            var types = random.some(schemes, probability: 0.5).map { "x-scheme-handler/\($0)" }
            if random.chance(0.3) { types.insert("text/plain", at: 0) }
            if random.chance(0.05), let first = types.first { types[0] = first.uppercased() }
            var value = types.map { $0 + (random.chance(0.05) ? " " : "") }.joined(separator: ";")
            if random.chance(0.8) { value += ";" }
            if random.chance(0.02) { value += "bad\\qescape;" }
            lines.append("MimeType=" + value)
        }
        if random.chance(0.03) { lines.append("this line is not a key") }
        return (lines.joined(separator: "\n") + "\n", marks)
    }

    /// A mimeapps.list (or desktop-specific list, or defaults.list): defaults, and with
    /// `full` added and removed associations; now and then a line GLib refuses, or blanks
    /// inside a list.
    static func mimeapps(_ schemes: [String], random: inout SeededGenerator, full: Bool) -> String {
        let ids = idPool + ["missing.desktop"] + ownExports
        func list() -> String {
            let chosen = (0..<Int.random(in: 1...3, using: &random)).map { _ in random.pick(ids) }
            var value = chosen.joined(separator: ";")
            if random.chance(0.7) { value += ";" }
            if random.chance(0.04) { value = value.replacingOccurrences(of: ";", with: "; ") }
            return value
        }
        var text = random.chance(0.1) ? "# written by a test\n" : ""
        var groups: [(String, Double)] = [("Default Applications", 0.6)]
        if full { groups += [("Added Associations", 0.45), ("Removed Associations", 0.35)] }
        for (group, probability) in groups.shuffled(using: &random) where random.chance(probability) {
            text += "[\(group)]\n"
            for scheme in schemes where random.chance(0.5) {
                text += "x-scheme-handler/\(scheme)\(random.chance(0.1) ? " = " : "=")\(list())\n"
            }
            text += "text/plain=\(random.pick(ids));\n\n"
        }
        if random.chance(0.03) { text += "garbage\n" }
        return text
    }
}
