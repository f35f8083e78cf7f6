import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The project's own interface (`org.swift_launch_services.LaunchServices1`) on a private
/// session bus, called by clients nobody on this project wrote (Python's `dbus`, `busctl`,
/// `gdbus`): `Open`'s full answer read field by field against `lsopen --json`'s, its options,
/// its errors, `CanOpen`, the reports, `Quit`, and the introspection against docs/dbus/.
@Suite("The project's D-Bus interface", .serialized)
struct SessionBusInterfaceTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath
    static let interface = LaunchServicesBus.interface

    /// Calls `method` with the JSON-encoded `arguments` through Python's dbus bindings and
    /// prints `{"value": …, "types": …}` (each value with its D-Bus type letters beside it),
    /// or `{"error": NAME, "message": TEXT}`.
    static let pythonCall = """
        import dbus, json, sys
        def plain(v):
            if isinstance(v, dbus.Boolean): return bool(v)
            if isinstance(v, dbus.Dictionary): return {str(k): plain(x) for k, x in v.items()}
            if isinstance(v, dbus.Array): return [plain(x) for x in v]
            if isinstance(v, (dbus.Int64, dbus.Int32, dbus.UInt32)): return int(v)
            if isinstance(v, dbus.Double): return float(v)
            return str(v)
        def types(v):
            if isinstance(v, dbus.Dictionary): return {str(k): types(x) for k, x in v.items()}
            if isinstance(v, dbus.Array): return [types(x) for x in v]
            return {dbus.Boolean: "b", dbus.String: "s", dbus.Int64: "x", dbus.Double: "d"}.get(type(v), type(v).__name__)
        bus = dbus.bus.BusConnection(sys.argv[1])
        proxy = dbus.Interface(bus.get_object(sys.argv[2], sys.argv[3]), sys.argv[4])
        args = json.loads(sys.argv[6])
        args = [dbus.Dictionary(a, signature="sv") if isinstance(a, dict) else a for a in args]
        try:
            value = getattr(proxy, sys.argv[5])(*args)
            print(json.dumps({"value": plain(value), "types": types(value)}))
        except dbus.exceptions.DBusException as e:
            print(json.dumps({"error": e.get_dbus_name(), "message": e.get_dbus_message()}))
        """



    /// A method of the interface called through Python's dbus: its answer (`value`, `types`)
    /// or its error (`error`, `message`).
    private func python(_ method: String, _ arguments: [Any], _ bus: PrivateSessionBus) throws -> [String: Any] {
        let encoded = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        let run = try bus.run(PrivateSessionBus.python, ["-c", Self.pythonCall, bus.address, Self.name, Self.path, Self.interface, method, encoded])
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout) \(run.stderr)")
    }

    @Test("Open's answer through Python's dbus, field by field: the fields, values and types of lsopen --json's; options; errors by name with lsopen's message")
    func openFieldByField() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        let cold = try python("Open", ["todolist://www.acme.com?Quarterly%20Report", [String: Any]()], bus)
        let answer = try #require(cold["value"] as? [String: Any], "\(cold)")
        let types = try #require(cold["types"] as? [String: Any])
        #expect(answer["opened"] as? Bool == true && types["opened"] as? String == "b")
        #expect(answer["url"] as? String == "todolist://www.acme.com?Quarterly%20Report" && types["url"] as? String == "s")
        #expect(answer["app"] as? String == "com.acme.todolist" && types["app"] as? String == "s")
        #expect(answer["kind"] as? String == "native")
        #expect(answer["launched"] as? Bool == true && types["launched"] as? String == "b")
        #expect(answer["launchState"] as? String == "cold")
        #expect(answer["method"] is String)
        let phases = try #require(answer["phasesMs"] as? [String: Double], "\(answer)")
        #expect(!phases.isEmpty)
        #expect((types["phasesMs"] as? [String: String])?.values.allSatisfy { $0 == "d" } == true, "\(types)")
        #expect((answer["totalMs"] as? Double).map { $0 > 0 } == true && types["totalMs"] as? String == "d")
        #expect(answer["error"] == nil)
        try waitUntil("todolist has the URL", within: 10) { h.appOutput.contains("[todolist] query: Quarterly Report") }
        // Identified by the bus's credentials as a socket peer would be: the user's process.
        #expect(h.appOutput.contains("[todolist] from: org.swift-launch-services.lsopen"))

        // Warm now: the same fields as lsopen --json's (but its own wait), with the same values.
        let lsopen = try h.lsopen("--json", "todolist://warm1")
        let expected = try #require(lsopen.json)
        let warm = try python("Open", ["todolist://warm2", ["background": true]], bus)
        let warmAnswer = try #require(warm["value"] as? [String: Any], "\(warm)")
        #expect(Set(warmAnswer.keys) == Set(expected.keys).subtracting(["waitMs"]), "\(warmAnswer.keys) / \(expected.keys)")
        for key in ["opened", "app", "kind", "launched", "launchState", "method"] {
            #expect("\(warmAnswer[key] ?? "none")" == "\(expected[key] ?? "none")", "\(key)")
        }
        #expect(Set((warmAnswer["phasesMs"] as? [String: Any] ?? [:]).keys) == Set((expected["phasesMs"] as? [String: Any] ?? [:]).keys))

        // --fallback's meaning: the fallback opened, and the answer says from what.
        let fellBack = try python("Open", ["nosuch:x", ["fallback": "todolist://fallback"]], bus)
        let fellBackAnswer = try #require(fellBack["value"] as? [String: Any], "\(fellBack)")
        #expect(fellBackAnswer["url"] as? String == "todolist://fallback")
        #expect(fellBackAnswer["fallbackFrom"] as? String == "nosuch:x")
        try waitUntil("todolist has the fallback", within: 10) { h.appOutput.contains("[todolist] host: fallback") }

        // Failures: the error named after lsopen's code, with its message.
        let refused = try python("Open", ["nosuch:x", [String: Any]()], bus)
        #expect(refused["error"] as? String == "org.swift_launch_services.LaunchServices.Error.NoHandler", "\(refused)")
        let lsopenRefused = try h.lsopen("--json", "nosuch:x")
        #expect(refused["message"] as? String == lsopenRefused.errorMessage, "\(refused) / \(lsopenRefused.stdout)")
        let badType = try python("Open", ["todolist://x", ["background": "yes"]], bus)
        #expect(badType["error"] as? String == "org.swift_launch_services.LaunchServices.Error.InvalidRequest", "\(badType)")
        #expect((badType["message"] as? String)?.contains("background is a boolean (b)") == true, "\(badType)")
        let unknown = try python("Open", ["todolist://x", ["backgroud": true]], bus)
        #expect((unknown["message"] as? String)?.contains("unknown option 'backgroud'") == true, "\(unknown)")
        let noSuchApp = try python("Open", ["todolist://x", ["app": "com.acme.nosuch"]], bus)
        #expect((noSuchApp["error"] as? String)?.hasPrefix("org.swift_launch_services.LaunchServices.Error.") == true, "\(noSuchApp)")
        let lsopenNoSuchApp = try h.lsopen("--json", "--app", "com.acme.nosuch", "todolist://x")
        #expect(noSuchApp["message"] as? String == lsopenNoSuchApp.errorMessage, "\(noSuchApp) / \(lsopenNoSuchApp.stdout)")
    }

    @Test("a URL too long to be a frame is refused by name (InvalidRequest naming the limit), and the same connection's next call is answered")
    func oversizedRequest() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }
        // One connection, two calls: 2 MiB of URL (the frame limit is 1 MiB), then CanOpen.
        let script = """
            import dbus, json, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            proxy = dbus.Interface(bus.get_object(sys.argv[2], sys.argv[3]), sys.argv[4])
            out = {}
            for method, call in (("Open", lambda: proxy.Open("todolist://" + "a" * (2 << 20), dbus.Dictionary({}, signature="sv"))),
                                 ("CanOpen", lambda: proxy.CanOpen("todolist://x"))):
                try:
                    out[method] = {"value": bool(call()) if method == "CanOpen" else {str(k): str(v)[:200] for k, v in call().items()}}
                except dbus.exceptions.DBusException as e:
                    out[method] = {"error": e.get_dbus_name(), "message": e.get_dbus_message()}
            print(json.dumps(out))
            """
        let run = try bus.run(PrivateSessionBus.python, ["-c", script, bus.address, Self.name, Self.path, Self.interface])
        #expect(run.status == 0, "\(run.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: [String: Any]], "\(run.stdout) \(run.stderr)")
        #expect(out["Open"]?["error"] as? String == "org.swift_launch_services.LaunchServices.Error.InvalidRequest", "\(out) \(h.daemonOutput.suffix(2000))")
        #expect((out["Open"]?["message"] as? String)?.contains("at most 1048576 bytes (maximumFrameLength)") == true, "\(out)")
        #expect(out["CanOpen"]?["value"] as? Bool == true, "\(out)")
        #expect(!h.appOutput.contains("[todolist]"), "nothing reached the app: \(h.appOutput)")
    }

    @Test("busctl --json reads Open's a{sv}; gdbus CanOpen answers true and false; annotationJSON reaches the app")
    func busctlAndGdbus() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon(apps: [.test("alpha")])
        defer { h.stop() }

        let run = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "--json=short", "call", Self.name, Self.path, Self.interface, "Open",
                                               "sa{sv}", "todolist://busctl", "1", "annotationJSON", "s", "{\"note\":[1,2.5,true]}"])
        #expect(run.status == 0, "\(run.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(reply["type"] as? String == "a{sv}")
        let fields = try #require((reply["data"] as? [Any])?.first as? [String: Any], "\(reply)")
        #expect((fields["app"] as? [String: Any])?["data"] as? String == "com.acme.todolist", "\(fields)")
        #expect((fields["opened"] as? [String: Any])?["type"] as? String == "b")
        #expect((fields["phasesMs"] as? [String: Any])?["type"] as? String == "a{sv}")
        try waitUntil("todolist has the URL", within: 10) { h.appOutput.contains("[todolist] host: busctl") }
        let annotated = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "call", Self.name, Self.path, Self.interface, "Open",
                                                     "sa{sv}", "alpha:annotated", "2", "annotationJSON", "s", "{\"note\":[1,2.5,true]}", "background", "b", "true"])
        #expect(annotated.status == 0, "\(annotated.stderr)")
        #expect(h.eventNames().contains { $0.contains("url=alpha:annotated") && $0.contains("annotation={\"note\":[1,2.5,true]}") }, "\(h.eventNames())")

        for (url, answer) in [("todolist://x", "(true,)"), ("nosuch:x", "(false,)")] {
            let canOpen = try bus.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                      "--method", Self.interface + ".CanOpen", url])
            #expect(canOpen.status == 0, "\(canOpen.stderr)")
            #expect(canOpen.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == answer, "\(url): \(canOpen.stdout)")
        }
        let version = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "get-property", Self.name, Self.path, Self.interface, "Version"])
        #expect(version.stdout == "s \"\(LaunchServicesVersion.current)\"\n", "\(version.stdout) \(version.stderr)")
    }

    @Test("Explain, Apps, Running, History and Quit: lsctl's reports as dictionaries")
    func reports() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        let apps = try #require(try python("Apps", [], bus)["value"] as? [[String: Any]])
        #expect(apps.contains { $0["id"] as? String == "com.acme.todolist" }, "\(apps)")
        let explain = try #require(try python("Explain", ["todolist://x"], bus)["value"] as? [String: Any])
        #expect(explain["app"] as? String == "com.acme.todolist" && explain["scheme"] as? String == "todolist", "\(explain)")
        #expect(try h.lsopen("todolist://running").status == 0)
        let running = try #require(try python("Running", [], bus)["value"] as? [[String: Any]])
        let todolist = try #require(running.first { $0["id"] as? String == "com.acme.todolist" }, "\(running)")
        #expect(todolist["state"] is String && todolist["pid"] is Int, "\(todolist)")
        let history = try #require(try python("History", [], bus)["value"] as? [[String: Any]])
        #expect(history.contains { $0["scheme"] as? String == "todolist" && $0["app"] as? String == "com.acme.todolist" }, "\(history)")

        let quit = try #require(try python("Quit", ["com.acme.todolist"], bus)["value"] as? [String: Any])
        #expect(quit["quit"] as? String == "com.acme.todolist", "\(quit)")
        let after = try #require(try python("Running", [], bus)["value"] as? [[String: Any]])
        #expect(!after.contains { $0["id"] as? String == "com.acme.todolist" }, "\(after)")
        let notRunning = try python("Quit", ["com.acme.todolist"], bus)
        #expect((notRunning["error"] as? String)?.hasPrefix("org.swift_launch_services.LaunchServices.Error.") == true, "\(notRunning)")
    }

    @Test("an app's child calling the interface is that app: CanOpen gated by its LSApplicationQueriesSchemes, History and Quit refused")
    func appChildIsGated() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let out = try AppIdentityTests.scratchFolder("lsbus")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let call = "/usr/bin/gdbus call --address \(bus.address) --dest \(Self.name) --object-path \(Self.path) --method \(Self.interface)"
        let script = "\(call).CanOpen alpha:x >\(out)/canopen 2>&1; \(call).History >\(out)/history 2>&1; \(call).Quit alpha >\(out)/quit 2>&1; echo done >\(out)/status"
        let h = try DaemonHarness(apps: [.test("alpha"), .test("zevil", "--child-run=\(script)")], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { h.stop() }
        try waitUntil("the daemon owns its name", within: 20) { h.daemonOutput.contains("owns \(Self.name) on the session bus") }
        #expect(try h.lsopen("alpha:started").status == 0)
        #expect(try h.lsopen("zevil:go").status == 0)
        try waitUntil("the child's calls were answered", within: 30) { FileManager.default.fileExists(atPath: out + "/status") }
        func read(_ name: String) -> String { (try? String(contentsOfFile: out + "/" + name, encoding: .utf8)) ?? "" }
        #expect(read("canopen").trimmingCharacters(in: .whitespacesAndNewlines) == "(false,)", "\(read("canopen"))")
        #expect(read("history").contains("org.swift_launch_services.LaunchServices.Error.NotPermitted"), "\(read("history"))")
        #expect(read("quit").contains("org.swift_launch_services.LaunchServices.Error.NotPermitted"), "\(read("quit"))")
        #expect(read("quit").contains("only the user quits apps"), "\(read("quit"))")
        // The same calls from the user's process are answered.
        let canOpen = try bus.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path,
                                                  "--method", Self.interface + ".CanOpen", "alpha:x"])
        #expect(canOpen.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(true,)", "\(canOpen.stdout) \(canOpen.stderr)")
    }

    @Test("gdbus monitor sees AppStateChanged (id, state, pid) as an app launches and quits, and never a URL")
    func appStateChangedSignal() throws {
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }
        let output = bus.root + "/monitor.out"
        let monitor = try ChildProcess("/usr/bin/gdbus", ["monitor", "--address", bus.address, "--dest", Self.name], environment: bus.environment, stdout: output)
        defer { monitor.stop() }
        func seen() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        // gdbus says who owns the name once its match is in place.
        try waitUntil("gdbus monitor is listening", within: 20) { seen().contains("is owned by") }

        let opened = try h.lsopen("--json", "todolist://secret-path?token=1")
        let pid = try #require(opened.json?["pid"] as? Int ?? (try python("Running", [], bus)["value"] as? [[String: Any]])?.first?["pid"] as? Int, "\(opened.stdout)")
        try waitUntil("the launch is signalled", within: 20) { seen().contains("AppStateChanged ('com.acme.todolist', 'active', uint32 \(pid))") }
        #expect(seen().contains("\(Self.path): \(Self.interface).AppStateChanged ('com.acme.todolist', 'launching', "), "\(seen())")
        _ = try python("Quit", ["com.acme.todolist"], bus)
        try waitUntil("the end is signalled", within: 20) { seen().contains("AppStateChanged ('com.acme.todolist', 'notRunning', uint32 0)") }
        #expect(!seen().contains("secret-path") && !seen().contains("todolist://"), "\(seen())")
    }

    @Test("gdbus introspect --xml shows exactly the methods, arguments, property and signal of docs/dbus/; busctl introspect lists each")
    func introspectionMatchesDocs() throws {
        let documented = try String(contentsOfFile: Self.documentPath, encoding: .utf8)
        let expected = try Self.members(of: Self.interface, in: documented)
        #expect(expected.count >= 10, "\(expected)")
        let bus = try PrivateSessionBus(apps: [:])
        defer { bus.remove() }
        let h = try bus.daemon()
        defer { h.stop() }

        let gdbus = try bus.run("/usr/bin/gdbus", ["introspect", "--xml", "--address", bus.address, "--dest", Self.name, "--object-path", Self.path])
        #expect(gdbus.status == 0, "\(gdbus.stderr)")
        #expect(try Self.members(of: Self.interface, in: gdbus.stdout) == expected, "\(gdbus.stdout)")
        // Every member is in the README's interface table.
        let readme = try String(contentsOfFile: URL(fileURLWithPath: Self.documentPath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md").path, encoding: .utf8)
        for member in expected where !member.hasPrefix("arg") {
            let name = try #require(member.split(separator: " ").first { $0.hasPrefix("name=") }).dropFirst("name=".count)
            #expect(readme.contains("| `\(name)(") || readme.contains("`\(name)() → ") || readme.contains("| property `\(name)`") || readme.contains("| signal `\(name)("),
                    "README's table lacks \(name)")
        }
        let busctl = try bus.run("/usr/bin/busctl", ["--address=" + bus.address, "introspect", Self.name, Self.path, Self.interface])
        #expect(busctl.status == 0, "\(busctl.stderr)")
        for member in expected where !member.hasPrefix("arg") {
            // "method Open" → a line ".Open  method …"
            let parts = member.split(separator: " ")
            let kind = String(parts[0])
            let name = try #require(parts.first { $0.hasPrefix("name=") }).dropFirst("name=".count)
            #expect(busctl.stdout.split(separator: "\n").contains { $0.hasPrefix("." + name + " ") && $0.contains(kind) }, "\(member): \(busctl.stdout)")
        }
    }

    static var documentPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/dbus/\(LaunchServicesBus.interface).xml").path
    }

    /// The members of `interface` in an introspection document, in order, one line each: a
    /// method, property or signal with its attributes sorted, then each of its arguments.
    /// Comments and annotations are left out: they document, they do not define.
    static func members(of interface: String, in xml: String) throws -> [String] {
        let uncommented = xml.replacingOccurrences(of: "<!--[\\s\\S]*?-->", with: "", options: .regularExpression)
        guard let start = uncommented.range(of: "<interface name=\"\(interface)\">"),
              let end = uncommented.range(of: "</interface>", range: start.upperBound..<uncommented.endIndex) else { return [] }
        let body = String(uncommented[start.upperBound..<end.lowerBound])
        let tag = try NSRegularExpression(pattern: "<(method|property|signal|arg)\\b([^>]*?)/?>")
        let attribute = try NSRegularExpression(pattern: "(\\w+)=\"([^\"]*)\"")
        var lines: [String] = []
        for match in tag.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
            let kind = String(body[Range(match.range(at: 1), in: body)!])
            let text = String(body[Range(match.range(at: 2), in: body)!])
            let attributes = attribute.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                String(text[Range($0.range(at: 1), in: text)!]) + "=" + String(text[Range($0.range(at: 2), in: text)!])
            }
            lines.append(([kind] + attributes.sorted()).joined(separator: " "))
        }
        return lines
    }
}
