import LaunchServicesCore
import Testing

/// `DBusName`: the D-Bus specification's rules for well-known bus names, each refusal by
/// name, and the object path the Desktop Entry specification derives; `DBusActivation`:
/// which desktop entry files GLib launches over D-Bus, and at which name. (The daemon's
/// tests compare `DBusName` with GLib's own `g_dbus_is_name` on generated names.)
@Suite("D-Bus names: the specification's rules, GLib's file-name rule, object paths")
struct DBusNameTests {
    @Test("valid well-known names: two or more elements of [A-Za-z0-9_-], none starting with a digit, up to 255 bytes")
    func valid() {
        for name in ["org.example.App", "a.b", "org.gnome.Service-for_you", "_private.x", "-dash.-start", "org.example.App2", "A.B.C.D.E",
                     "org.example." + String(repeating: "x", count: 255 - 12)] {
            #expect(DBusName.problem(wellKnown: name) == nil, "\(name)")
            #expect(DBusName.isWellKnown(name))
        }
    }

    @Test("each rule a name breaks, by name")
    func refusals() {
        let cases: [(String, DBusName.Problem)] = [
            ("", .empty),
            ("org.example." + String(repeating: "x", count: 256 - 12), .tooLong(bytes: 256)),
            (":1.42", .uniqueName),
            (":org.example.App", .uniqueName),
            ("App", .oneElement),
            ("org-example-App", .oneElement),
            (".org.example", .emptyElement(index: 0)),
            ("org..example", .emptyElement(index: 1)),
            ("org.example.", .emptyElement(index: 2)),
            (".", .emptyElement(index: 0)),
            ("1org.example", .elementStartsWithDigit(index: 0)),
            ("org.2example", .elementStartsWithDigit(index: 1)),
            ("org.example.App 2", .invalidByte(0x20, offset: 15)),
            ("org.example.Caf\u{e9}", .invalidByte(0xC3, offset: 15)),
            ("org/example.App", .invalidByte(UInt8(ascii: "/"), offset: 3)),
            ("org.example.App\u{0}x", .invalidByte(0, offset: 15)),
        ]
        for (name, problem) in cases {
            #expect(DBusName.problem(wellKnown: name) == problem, "\(name)")
            #expect(!DBusName.isWellKnown(name))
        }
        #expect("\(DBusName.Problem.elementStartsWithDigit(index: 1))" == "element 2 starts with a digit")
        #expect("\(DBusName.Problem.invalidByte(0x20, offset: 3))".hasPrefix("byte 0x20 at offset 3 is not allowed"))
        #expect("\(DBusName.Problem.invalidByte(UInt8(ascii: "/"), offset: 3))".hasPrefix("'/' at offset 3"))
    }

    @Test("the object path: / and the name with . as / and - as _")
    func objectPath() {
        #expect(DBusName.objectPath(forWellKnown: "org.example.FooViewer") == "/org/example/FooViewer")
        #expect(DBusName.objectPath(forWellKnown: "org.example.my-app") == "/org/example/my_app")
        #expect(DBusName.objectPath(forWellKnown: "-a.b_c-") == "/_a/b_c_")
    }

    @Test("GLib's rule: the file's own name minus an exact .desktop, when that is a bus name (the desktop file ID does not count)")
    func entryFiles() {
        #expect(DBusActivation.busName(forEntryFile: "org.example.Mail.desktop") == .success("org.example.Mail"))
        #expect(DBusActivation.busName(forEntryFile: "/usr/share/applications/org.example.Mail.desktop") == .success("org.example.Mail"))
        // applications/kde/org.kde.Foo.desktop has the desktop file ID kde-org.kde.Foo.desktop;
        // GLib takes the file's basename.
        #expect(DBusActivation.busName(forEntryFile: "/usr/share/applications/kde/org.kde.Foo.desktop") == .success("org.kde.Foo"))
        #expect(DBusActivation.busName(forEntryFile: "org.example.my-app.desktop") == .success("org.example.my-app"))

        #expect(DBusActivation.busName(forEntryFile: "firefox.desktop") == .failure(.invalidBusName(name: "firefox", problem: .oneElement)))
        #expect(DBusActivation.busName(forEntryFile: "org.example.2048.desktop") == .failure(.invalidBusName(name: "org.example.2048", problem: .elementStartsWithDigit(index: 2))))
        #expect(DBusActivation.busName(forEntryFile: ":1.2.desktop") == .failure(.invalidBusName(name: ":1.2", problem: .uniqueName)))
        #expect(DBusActivation.busName(forEntryFile: ".desktop") == .failure(.invalidBusName(name: "", problem: .empty)))
        #expect(DBusActivation.busName(forEntryFile: "org.example.App.DESKTOP") == .failure(.notDesktopFile(fileName: "org.example.App.DESKTOP")))
        #expect(DBusActivation.busName(forEntryFile: "org.example.App.desktop~") == .failure(.notDesktopFile(fileName: "org.example.App.desktop~")))
        // A combining mark after .desktop: GLib compares bytes, so this is no .desktop file.
        #expect(DBusActivation.busName(forEntryFile: "org.example.App.desktop\u{301}") == .failure(.notDesktopFile(fileName: "org.example.App.desktop\u{301}")))
        let refusal = DBusActivation.Refusal.invalidBusName(name: "firefox", problem: .oneElement)
        #expect("\(refusal)".hasPrefix("DBusActivatable is ignored: 'firefox' (the file name without .desktop) is not a D-Bus bus name: it has no '.'"))
    }

    @Test("D-Bus failures: what went wrong and what to do, text from others quoted; a D-Bus outcome says not delivered")
    func failures() {
        let refused = DesktopLaunchOutcome.failed(.dbus(.errorReply(name: "org.example.Error.No", message: "line\nforged")))
        #expect(refused.kind == .failedToStart && !refused.kind.isSuccess)
        #expect(refused.description == "not delivered: the reply was the error 'org.example.Error.No': 'line\\nforged'")
        #expect(DesktopLaunchOutcome.delivered.description == "delivered" && DesktopLaunchOutcome.delivered.kind.isSuccess)
        #expect("\(DBusCallFailure.noSessionBus(address: "unix:path=/run/user/7/bus", source: "XDG_RUNTIME_DIR", errno: 2, reason: "No such file or directory"))"
            == "no session bus at 'unix:path=/run/user/7/bus' (from XDG_RUNTIME_DIR): No such file or directory (errno 2); is a D-Bus session bus running for this user?")
        #expect("\(DBusCallFailure.tooManyCalls(limit: 64))".contains("64 calls already wait"))
    }
}
