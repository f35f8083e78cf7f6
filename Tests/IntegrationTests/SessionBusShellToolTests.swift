import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The shell's D-Bus tools reading the project's interface's whole answers: `gdbus call`
/// (GVariant text) opening a URL, and `dbus-send --print-reply`, which cannot write an
/// `a{sv}` (its dictionaries take no variants, and it sends no empty container), so cannot
/// call `Open` at all: with it a script asks `CanOpen` and `Explain`, reads `Running` and the
/// `Version` property, and a wrongly typed `Open` is refused by name.
@Suite("D-Bus tools from the shell", .serialized)
struct SessionBusShellToolTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath
    static let interface = LaunchServicesBus.interface



    /// dbus-send's run, its output's runs of spaces made one (its columns vary by type).
    private func dbusSend(_ member: String, _ arguments: [String], _ bus: PrivateSessionBus) throws -> ToolRun {
        var run = try bus.run("/usr/bin/dbus-send", ["--bus=" + bus.address, "--print-reply", "--reply-timeout=60000", "--dest=" + Self.name, Self.path, member] + arguments)
        run.stdout = run.stdout.replacingOccurrences(of: " +", with: " ", options: .regularExpression)
        return run
    }

    /// The top-level keys of the `a{sv}` GVariant text `({'key': <value>, …},)`: those at
    /// nesting depth one, outside strings.
    static func topLevelKeys(ofGVariantText text: String) -> Set<String> {
        var keys = Set<String>(), depth = 0, inString = false, current = "", escaped = false
        var lastString = ""
        for character in text {
            if inString {
                if escaped { escaped = false; current.append(character); continue }
                if character == "\\" { escaped = true; continue }
                if character == "'" { inString = false; lastString = current } else { current.append(character) }
                continue
            }
            switch character {
            case "'": inString = true; current = ""
            case "(", "{", "[", "<": depth += 1
            case ")", "}", "]", ">": depth -= 1
            case ":" where depth == 2: keys.insert(lastString)
            default: break
            }
        }
        return keys
    }

    @Test("gdbus call Open: the whole answer in GVariant text, lsopen --json's fields and values; options written as GVariant")
    func gdbusOpenWholeAnswer() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        func open(_ url: String, _ options: String) throws -> ToolRun {
            try bus.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                        "--method", Self.interface + ".Open", url, options])
        }
        let cold = try open("todolist://www.acme.com?Quarterly%20Report", "{}")
        #expect(cold.status == 0, "\(cold.stderr)")
        #expect(cold.stdout.hasPrefix("({") && cold.stdout.hasSuffix("},)\n"), "\(cold.stdout)")
        for field in ["'opened': <true>", "'app': <'com.acme.todolist'>", "'kind': <'native'>", "'launched': <true>",
                      "'launchState': <'cold'>", "'url': <'todolist://www.acme.com?Quarterly%20Report'>"] {
            #expect(cold.stdout.contains(field), "\(field): \(cold.stdout)")
        }
        try waitUntil("todolist has the URL", within: 10) { h.appOutput.contains("[todolist] query: Quarterly Report") }

        let lsopen = try h.lsopen("--json", "todolist://warm1")
        let expected = try #require(lsopen.json)
        let warm = try open("todolist://warm2", "{'background': <true>}")
        #expect(warm.status == 0, "\(warm.stderr)")
        #expect(Self.topLevelKeys(ofGVariantText: warm.stdout) == Set(expected.keys).subtracting(["waitMs"]), "\(warm.stdout) / \(expected.keys)")
        #expect(warm.stdout.contains("'launched': <false>") && warm.stdout.contains("'launchState': <'\(expected["launchState"] ?? "")'>"), "\(warm.stdout)")
        try waitUntil("todolist has the background URL", within: 10) { h.appOutput.contains("[todolist] host: warm2") }

        let refused = try open("nosuch:x", "{}")
        #expect(refused.status != 0)
        let message = try #require(try h.lsopen("--json", "nosuch:x").errorMessage)
        #expect(refused.stderr.contains("org.swift_launch_services.LaunchServices.Error.NoHandler: \(message)"), "\(refused.stderr)")
    }

    @Test("dbus-send --print-reply: CanOpen, Explain's whole dictionary, Running and the Version property; it cannot write Open's a{sv}, and a{ss} is refused by name")
    func dbusSend() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        for (url, answer) in [("todolist://x", "boolean true"), ("nosuch:x", "boolean false")] {
            let run = try dbusSend(Self.interface + ".CanOpen", ["string:" + url], bus)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) == answer, "\(url): \(run.stdout)")
        }

        // Explain: every field of lsctl explain --json is a dictionary entry of the reply.
        let explain = try dbusSend(Self.interface + ".Explain", ["string:todolist://x"], bus)
        #expect(explain.status == 0, "\(explain.stderr)")
        let report = try #require(try h.run("lsctl", ["explain", "--json", "todolist://x"]).json)
        #expect(!report.isEmpty)
        for key in report.keys { #expect(explain.stdout.contains("string \"\(key)\"\n"), "\(key): \(explain.stdout)") }
        #expect(explain.stdout.contains("string \"app\"\n variant string \"com.acme.todolist\""), "\(explain.stdout)")

        #expect(try h.lsopen("todolist://running").status == 0)
        let running = try dbusSend(Self.interface + ".Running", [], bus)
        #expect(running.status == 0, "\(running.stderr)")
        #expect(running.stdout.contains("string \"id\"\n variant string \"com.acme.todolist\""), "\(running.stdout)")

        let version = try dbusSend("org.freedesktop.DBus.Properties.Get", ["string:" + Self.interface, "string:Version"], bus)
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.stdout.contains("variant string \"\(LaunchServicesVersion.current)\""), "\(version.stdout)")

        // Open needs an a{sv}: dbus-send has no variant in a dictionary, so sends nothing.
        let variant = try dbusSend(Self.interface + ".Open", ["string:todolist://never", "dict:string:variant:background,true"], bus)
        #expect(variant.status != 0 && variant.stderr.contains("Unknown type \"variant\""), "\(variant.stdout) \(variant.stderr)")
        // What it can send instead, a{ss}, is the wrong signature: refused by name, nothing opened.
        let wrong = try dbusSend(Self.interface + ".Open", ["string:todolist://wrong", "dict:string:string:background,true"], bus)
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(wrong.stdout) \(wrong.stderr)")
        let after = try dbusSend(Self.interface + ".CanOpen", ["string:todolist://x"], bus)
        #expect(after.stdout.contains("boolean true"), "the daemon still answers: \(after.stdout) \(after.stderr)")
        #expect(!h.appOutput.contains("never") && !h.appOutput.contains("host: wrong"), "\(h.appOutput)")
    }
}
