import Foundation
import LaunchServicesProtocol
import Testing

/// The daemon's state reports (status, with its storage fields; running apps; pasteboards;
/// the debug hook's answer) decode what the daemon sends and encode back to the same text,
/// as `AdminReportTests` checks the registry's.
@Suite("Admin reports: the daemon's state")
struct StateReportTests {
    @Test("status")
    func status() throws {
        let text = """
        {
          "appsFolders" : [
            "/home/u/Applications"
          ],
          "appsRegistered" : 3,
          "appsRunning" : 1,
          "appsSuspended" : 0,
          "frontmost" : "com.example.todolist",
          "opensServed" : 12,
          "pasteboards" : 2,
          "persistentPasteboards" : 1,
          "pid" : 4242,
          "refusedBundles" : [
            "/home/u/Applications/bad.app: CFBundleIdentifier is missing"
          ],
          "schemesRegistered" : 4,
          "socket" : "/run/user/1000/launchservices/socket",
          "uptimeSeconds" : 1.5,
          "version" : "0.1.0"
        }
        """
        try ReportSamples.decode(StatusReport.self, text, expected: StatusReport(
            version: "0.1.0", pid: 4242, socket: "/run/user/1000/launchservices/socket", uptimeSeconds: 1.5,
            appsRegistered: 3, schemesRegistered: 4, appsRunning: 1, appsSuspended: 0, opensServed: 12,
            pasteboards: 2, persistentPasteboards: 1, frontmost: "com.example.todolist",
            appsFolders: ["/home/u/Applications"], refusedBundles: ["/home/u/Applications/bad.app: CFBundleIdentifier is missing"]))
        // No frontmost app: the key is absent.
        let none = try JSONDecoder().decode(StatusReport.self, from: Data(text.replacingOccurrences(of: "  \"frontmost\" : \"com.example.todolist\",\n", with: "").utf8))
        #expect(none.frontmost == nil)
        #expect(try !ReportSamples.daemonText(none).contains("frontmost"))
    }

    @Test("status with a damaged database set aside and a storage problem")
    func statusWithStorage() throws {
        let text = """
        {
          "appsFolders" : [

          ],
          "appsRegistered" : 0,
          "appsRunning" : 0,
          "appsSuspended" : 0,
          "damagedDatabases" : [
            {
              "file" : "/s/registry.sqlite",
              "keptAs" : "/s/registry.sqlite.damaged-20261125T103032Z",
              "lost" : "2 apps registered by hand (lsctl register, or an app's own check-in): a.b, c.d; 0 defaults (lsctl default)",
              "reason" : "SQLite: database disk image is malformed, error 11",
              "time" : "2026-11-25T10:30:32.460Z"
            }
          ],
          "opensServed" : 0,
          "pasteboards" : 0,
          "persistentPasteboards" : 0,
          "pid" : 7,
          "refusedBundles" : [

          ],
          "schemesRegistered" : 0,
          "socket" : "/s/socket",
          "storageProblems" : [
            "persistent pasteboards are not kept: cannot open /s/pasteboard.sqlite"
          ],
          "unreadableInAppsFolders" : [
            "apps folder /apps could not be read (Too many open files)"
          ],
          "uptimeSeconds" : 1,
          "version" : "0.2.0"
        }
        """
        try ReportSamples.decode(StatusReport.self, text, expected: StatusReport(
            version: "0.2.0", pid: 7, socket: "/s/socket", uptimeSeconds: 1, appsRegistered: 0, schemesRegistered: 0,
            appsRunning: 0, appsSuspended: 0, opensServed: 0, pasteboards: 0, persistentPasteboards: 0, frontmost: nil,
            appsFolders: [], refusedBundles: [],
            damagedDatabases: [DamagedDatabaseReport(file: "/s/registry.sqlite", keptAs: "/s/registry.sqlite.damaged-20261125T103032Z",
                                                     reason: "SQLite: database disk image is malformed, error 11",
                                                     lost: "2 apps registered by hand (lsctl register, or an app's own check-in): a.b, c.d; 0 defaults (lsctl default)",
                                                     time: "2026-11-25T10:30:32.460Z")],
            storageProblems: ["persistent pasteboards are not kept: cannot open /s/pasteboard.sqlite"],
            unreadableInAppsFolders: ["apps folder /apps could not be read (Too many open files)"]))
    }

    @Test("running")
    func running() throws {
        let text = """
        [
          {
            "frontmost" : true,
            "id" : "a.one",
            "pendingOpens" : 0,
            "pid" : 99,
            "state" : "foreground"
          },
          {
            "frontmost" : false,
            "id" : "b.two",
            "pendingOpens" : 1,
            "phase" : "didFinishLaunching",
            "state" : "launching"
          }
        ]
        """
        try ReportSamples.decode([RunningReport].self, text, expected: [
            RunningReport(id: "a.one", state: "foreground", pid: 99, frontmost: true, pendingOpens: 0, phase: nil),
            RunningReport(id: "b.two", state: "launching", pid: nil, frontmost: false, pendingOpens: 1, phase: "didFinishLaunching"),
        ])
    }

    @Test("pasteboards")
    func pasteboards() throws {
        let text = """
        [
          {
            "bytes" : 5,
            "changeCount" : 2,
            "expiresInSeconds" : 60,
            "items" : [
              {
                "bytes" : 5,
                "type" : "public.utf8-plain-text"
              }
            ],
            "name" : "general",
            "passwordProtected" : false,
            "persistent" : false
          },
          {
            "bytes" : 0,
            "changeCount" : 7,
            "items" : [

            ],
            "name" : "secret",
            "passwordProtected" : true,
            "persistent" : true
          }
        ]
        """
        try ReportSamples.decode([PasteboardReport].self, text, expected: [
            PasteboardReport(name: "general", changeCount: 2, items: [.init(type: "public.utf8-plain-text", bytes: 5)], bytes: 5,
                             expiresInSeconds: 60, persistent: false, passwordProtected: false),
            PasteboardReport(name: "secret", changeCount: 7, items: [], bytes: 0, expiresInSeconds: nil, persistent: true, passwordProtected: true),
        ])
    }

    @Test("debug-stall's answer")
    func debugStall() throws {
        // Written by hand by the daemon, not by its encoder.
        #expect(try JSONDecoder().decode(DebugStallReport.self, from: Data(#"{"stalling": true}"#.utf8)) == DebugStallReport(stalling: true))
    }
}
