import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// `DBusName` against GLib's own `g_dbus_is_name` (through python3-gi's `Gio.dbus_is_name`,
/// Debian's GLib 2.74): generated names, and the boundaries, must be judged the same, with
/// GLib's extra rule for a DBusActivatable entry (a unique name, `:…`, is refused). The seed
/// is printed so a failure can be replayed (`DBUS_NAME_SEED=…`).
@Suite("D-Bus names against GLib's g_dbus_is_name")
struct DBusNameGLibTests {
    @Test("generated names: DBusName.isWellKnown equals g_dbus_is_name(name) && name[0] != ':' (GLib's rule for an entry's file name)")
    func sameAsGLib() throws {
        let seed = ProcessInfo.processInfo.environment["DBUS_NAME_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("DBusNameGLibTests seed: \(seed)")
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        let pieces = ["a", "Z", "q", "0", "9", "_", "-", ".", ".", ".", ":", "\u{e9}", " ", "/", "org", "example", "App", "1x"]
        var names = ["", ".", "a.", ".a", "a..b", "a.b", ":a.b", ":1.2", "1a.b", "a.1b", "-a.b", "a.-b", "_.-", "a.b.",
                     "a." + String(repeating: "b", count: 253), "a." + String(repeating: "b", count: 254)]
        for _ in 0..<3000 {
            names.append((0..<next(9)).map { _ in pieces[next(pieces.count)] }.joined())
        }
        let folder = try TemporaryFolder(prefix: "ls-dbus-names")
        defer { folder.remove() }
        let input = folder.path + "/names.json"
        try JSONEncoder().encode(names).write(to: URL(fileURLWithPath: input))
        let script = """
            import json, sys
            from gi.repository import Gio
            names = json.load(open(sys.argv[1], encoding="utf-8"))
            print(json.dumps([Gio.dbus_is_name(n) and not n.startswith(":") for n in names]))
            """
        let run = try ChildProcess.run("/usr/bin/python3", ["-c", script, input], scratch: folder.path, timeout: 120)
        #expect(run.status == 0, "python3 with python3-gi failed (scripts/test installs python3-gi): \(run.stderr)")
        let glib = try JSONDecoder().decode([Bool].self, from: Data(run.stdout.utf8))
        #expect(glib.count == names.count)
        var differences: [String] = []
        for (name, expected) in zip(names, glib) where DBusName.isWellKnown(name) != expected {
            differences.append("\(TerminalText.quoted(name)): GLib \(expected), DBusName \(!expected)")
        }
        #expect(differences.isEmpty, "seed \(seed): \(differences.prefix(20).joined(separator: "; "))")
        #expect(glib.contains(true) && glib.contains(false))
    }
}
