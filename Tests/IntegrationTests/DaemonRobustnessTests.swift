import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// The daemon in the foreground: logs, clean stop, bad bundles, and bad peers.
@Suite("Daemon robustness")
struct DaemonRobustnessTests {
    @Test("outside systemd: logs go to stderr, nothing about systemd, SIGTERM stops cleanly with its apps")
    func foregroundLoggingAndStop() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        #expect(try h.lsopen("alpha:1").status == 0)
        let app = try #require(h.appPIDs.first)
        kill(h.daemonPID, SIGTERM)
        try h.eventually("the daemon exits") { !isAlive(h.daemonPID) }
        try h.eventually("its app exits with it") { !isAlive(app) }
        let log = h.daemonOutput
        #expect(log.contains("serving \(h.socket)"))
        #expect(log.contains("stopped"))
        #expect(!log.lowercased().contains("systemd"), "\(log)")
        #expect(!log.contains("sd_"))
    }

    @Test("bad bundles are refused with the key named; the good ones still load")
    func badBundles() throws {
        var malformed = TestApp.test("malformed")
        malformed.rawPlist = "<plist><dict><key>CFBundleIdentifier</key><string>x"
        var badScheme = TestApp.test("badscheme", schemes: ["1nope"])
        badScheme.id = "test.badscheme"
        var noID = TestApp.test("noid")
        noID.rawPlist = """
        <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleExecutable</key><string>lstestapp</string></dict></plist>
        """
        var duplicate = TestApp.test("alpha2", schemes: ["alpha2"])
        duplicate.id = "test.alpha"
        let h = try DaemonHarness(apps: [.test("alpha"), malformed, badScheme, noID, duplicate])
        defer { h.stop() }
        let status = try h.run("lsctl", ["status", "--json"])
        let report = try status.decode(StatusReport.self)
        #expect(report.appsRegistered == 1)
        let refused = report.refusedBundles
        #expect(refused.count == 4, "\(refused)")
        #expect(refused.contains { $0.contains("malformed.app") && $0.contains("not a valid property list") })
        #expect(refused.contains { $0.contains("badscheme.app") && $0.contains("CFBundleURLTypes[0].CFBundleURLSchemes") && $0.contains("'1nope'") })
        #expect(refused.contains { $0.contains("noid.app") && $0.contains("CFBundleIdentifier") })
        #expect(refused.contains { $0.contains("alpha2.app") && $0.contains("already registered") })
        #expect(try h.lsopen("alpha:ok").status == 0)
        #expect(try h.lsopen("--json", "badscheme:x").errorCode == "noHandler", "a refused bundle registers nothing")
    }

    @Test("malformed and oversized frames get a protocolError and the daemon keeps serving")
    func badFrames() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let cases: [[UInt8]] = [
            [0, 0, 0, 0],                                // empty frame
            [0xFF, 0xFF, 0xFF, 0xFF],                    // 4 GiB declared
            [0, 0, 0, 6, 0x7E, 0, 0, 0, 1, 0],           // unknown kind
            [0, 0, 0, 10, 0x01, 0, 0, 0, 0, 1, 0, 0, 0, 99], // field longer than the frame
            Frame.encode(Envelope(id: 1, .open(url: "alpha:x", annotation: nil))), // open before hello
            Frame.encode(Envelope(id: 0, .hello(version: 99, role: .client, program: "t"))), // wrong version
        ]
        for bytes in cases {
            let connection = try FrameConnection.connect(path: h.socket)
            defer { connection.close() }
            try connection.send(bytes)
            let reply = try connection.receive(waitingFor: "the daemon's refusal", deadline: .now + .seconds(10))
            guard case .failure(let error) = reply.message else {
                Issue.record("expected a failure for \(bytes.prefix(12)), got \(reply.message.kindName)")
                continue
            }
            #expect(error.code == .protocolError, "\(error)")
            #expect(!error.message.isEmpty)
            // The daemon closes that connection …
            #expect(throws: ClientError.self) { _ = try connection.receive(waitingFor: "close", deadline: .now + .seconds(10)) }
        }
        // A request under id 0 (after a good hello) is refused the same way.
        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        try connection.send(Frame.encode(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "t")))
                            + Frame.encode(Envelope(id: 0, .query(topic: "status"))))
        var refusal: OpenError?
        for _ in 0..<2 {
            if case .failure(let error) = try connection.receive(waitingFor: "welcome, then the refusal", deadline: .now + .seconds(10)).message { refusal = error }
        }
        #expect(refusal?.code == .protocolError)
        #expect(refusal?.message.contains("query has request id 0") == true, "\(String(describing: refusal))")
        // … and keeps serving everyone else.
        #expect(try h.lsopen("alpha:still-here").status == 0)
        // An unknown query topic is a bad request, not a broken connection.
        let client = try LaunchServicesClient(socketPath: h.socket, program: "test")
        defer { client.close() }
        let unknown = #expect(throws: ClientError.self) { _ = try client.query("nonsense") }
        #expect(unknown?.code == .invalidRequest, "\(String(describing: unknown))")
        #expect(unknown?.description == AdminRequestError.unknownQuery(topic: "nonsense").description)
        #expect(try client.query(.status).contains("appsRegistered"), "the connection stays open")
        // So is an unknown or ill-formed command.
        let badCommand = #expect(throws: ClientError.self) { _ = try client.command("rescan", ["now"]) }
        #expect(badCommand?.code == .invalidRequest)
        #expect(badCommand?.description == AdminRequestError.unknownCommand(verb: "rescan", argumentCount: 1).description, "\(String(describing: badCommand))")
        // The test hook is refused by a daemon not started to allow it.
        let stall = #expect(throws: ClientError.self) { _ = try client.debug(.stall) }
        #expect(stall?.code == .notPermitted, "\(String(describing: stall))")
        #expect(try client.query(.status).contains("appsRegistered"), "the connection stays open")
    }

    @Test("a peer that shuts down its sending side still reads every answer it is owed")
    func halfClose() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        try connection.send(Frame.encode(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "t")))
                            + Frame.encode(Envelope(id: 1, .open(url: "alpha:half", annotation: nil)))
                            + Frame.encode(Envelope(id: 2, .query(topic: "status"))))
        shutdown(connection.fd, Int32(SHUT_WR))
        var answered: Set<UInt32> = []
        var opened = false
        while answered.count < 2 {
            let envelope = try connection.receive(waitingFor: "the answers", deadline: .now + .seconds(20))
            if envelope.id != 0 { answered.insert(envelope.id) }
            if case .openResult(let outcome) = envelope.message { opened = outcome.opened }
        }
        #expect(opened, "the cold open's answer arrives after the peer stopped sending")
        expectClosed(connection)
    }

    @Test("a peer that shuts down its sending side reads its pasteboard answers, the delayed wrong-password one included, then the daemon closes")
    func halfCloseWithPasteboardWaiting() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p", "--password", "right", "--text", "v").status == 0)
        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        // The wrong guess holds the connection for a second; the paste waits behind it.
        try connection.send(Frame.encode(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "t")))
                            + Frame.encode(Envelope(id: 1, .pasteboard(PasteboardRequest(.paste, name: "p", password: "wrong"))))
                            + Frame.encode(Envelope(id: 2, .pasteboard(PasteboardRequest(.paste, name: "p", password: "right")))))
        shutdown(connection.fd, Int32(SHUT_WR))
        var answers: [UInt32: Message] = [:]
        while answers.count < 2 {
            let envelope = try connection.receive(waitingFor: "the pasteboard answers", deadline: .now + .seconds(20))
            if envelope.id != 0 { answers[envelope.id] = envelope.message }
        }
        guard case .failure(let wrong) = answers[1], case .pasteboardResult(let pasted) = answers[2] else {
            Issue.record("\(answers)")
            return
        }
        #expect(wrong.code == .notPermitted)
        #expect(pasted.items.first?.text == "v")
        expectClosed(connection)
    }

    /// The daemon closes the connection: end of file, not a timeout nor another frame.
    func expectClosed(_ connection: FrameConnection, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let envelope = try connection.receive(waitingFor: "close", deadline: .now + .seconds(10))
            Issue.record("the daemon sent \(envelope.message.kindName) instead of closing", sourceLocation: sourceLocation)
        } catch {
            guard case .connectionClosed = error else {
                Issue.record("the daemon did not close the connection: \(error)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    @Test("a refused peer that already wrote more reads the reason, not a reset")
    func refusalIsReadable() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let connection = try FrameConnection.connect(path: h.socket)
        defer { connection.close() }
        // An unknown kind, then 256 KiB the daemon will never read as frames.
        try connection.send([0, 0, 0, 5, 0x7E, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 256 * 1024))
        let reply = try connection.receive(waitingFor: "the refusal", deadline: .now + .seconds(10))
        guard case .failure(let error) = reply.message else {
            Issue.record("expected failure, got \(reply.message.kindName)")
            return
        }
        #expect(error.code == .protocolError)
        #expect(error.message.contains("unknown message kind 0x7e"))
    }

    @Test("killed under load: every waiting caller hears so at once; nothing persisted is lost; apps do not outlive it")
    func killedUnderLoad() throws {
        let h = try DaemonHarness(apps: [.test("slow", schemes: ["slow", "both"], "--did-finish=hang"), .test("alpha", schemes: ["alpha", "both"])],
                                  config: #"{"deadlines": {"didFinishLaunching": 60}}"#)
        defer { h.stop() }
        #expect(try h.lsctl("default", "both", "test.slow").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "safe").status == 0)
        #expect(try h.lsopen("alpha:warm").status == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = h.socket
        // Twelve callers wait on a launch that hangs ("both" opens in the slow app too, by default).
        let callers = try (0..<12).map { i in
            try ChildProcess(DaemonHarness.binary("lsopen"), ["--json", i % 2 == 0 ? "slow:\(i)" : "both:\(i)"], environment: environment,
                             stdout: h.root + "/caller\(i).out", stderr: h.root + "/caller\(i).err")
        }
        try h.eventually("the slow app is stuck in didFinishLaunching") { h.eventNames().contains { $0.hasPrefix("didFinishLaunching -> hang") } }
        try h.eventually("all twelve opens wait on it", within: 20) {
            try h.running().first { $0.id == "test.slow" }?.pendingOpens == 12
        }
        let appPIDs = h.appPIDs
        try h.restart(signal: SIGKILL)
        for (i, caller) in callers.enumerated() {
            let status = caller.wait(timeout: 10)
            #expect(status == 69, "caller \(i) ended with \(String(describing: status))")
            let out = (try? String(contentsOfFile: h.root + "/caller\(i).out", encoding: .utf8)) ?? ""
            #expect(out.contains("launchservicesd closed the connection"), "caller \(i): \(out)")
        }
        try h.eventually("the apps of the killed daemon are gone, the hung one too") { appPIDs.allSatisfy { !isAlive($0) } }
        // The restarted daemon has everything it had promised.
        #expect(try h.lsctl("explain", "--json", "both:1").decode(ExplainReport.self).app == "test.slow")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").stdout == "safe")
        #expect(try h.lsopen("alpha:after").status == 0)
    }

    @Test("a client that disconnects mid-request does not disturb the daemon or the app")
    func disconnectMidRequest() throws {
        let h = try DaemonHarness(apps: [.test("slow", "--did-finish=hang")], config: """
            {"deadlines": {"didFinishLaunching": 1}}
            """)
        defer { h.stop() }
        let client = try LaunchServicesClient(socketPath: h.socket, program: "test")
        let id: UInt32 = 7
        try client.connection.send(Frame.encode(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "t")))
                                   + Frame.encode(Envelope(id: id, .open(url: "slow:x", annotation: nil))))
        try h.eventually("the app is launching") { !h.appPIDs.isEmpty }
        client.close()
        let pid = try #require(h.appPIDs.first)
        try h.eventually("the hung app is still terminated at its deadline") { !isAlive(pid) }
        let status = try h.run("lsctl", ["status", "--json"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("\"appsRunning\" : 0"))
    }

    @Test("a second daemon on a served socket refuses to start, and the first keeps serving")
    func secondDaemonRefused() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let second = try h.run("launchservicesd", ["--socket", h.socket, "--apps", h.appsFolder, "--state", h.root + "/state2"], timeout: 20)
        #expect(second.status != 0)
        #expect(second.stderr.contains("already serves"))
        #expect(try h.lsopen("alpha:1").status == 0)
    }

    @Test("a configuration file with an unknown key stops the daemon with the key named")
    func badConfiguration() throws {
        let folder = try TemporaryFolder(prefix: "lscfg")
        defer { folder.remove() }
        let root = folder.path
        try #"{"deadlines": {"didFinishLaunchin": 3}}"#.write(toFile: root + "/c.json", atomically: true, encoding: .utf8)
        let r = try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--socket", root + "/s", "--config", root + "/c.json", "--state", root + "/state"],
                                     environment: ProcessInfo.processInfo.environment, scratch: root, timeout: 20)
        #expect(r.status != 0)
        #expect(r.stderr.contains("deadlines.didFinishLaunchin"), "\(r.stderr)")
    }

    @Test("a socket folder another user could tamper with stops the daemon, naming it")
    func unsafeSocketFolder() throws {
        let folder = try TemporaryFolder(prefix: "lsdir")
        defer { folder.remove() }
        let root = folder.path
        try FileManager.default.createDirectory(atPath: root + "/open", withIntermediateDirectories: true)
        chmod(root + "/open", 0o777)
        // Three times: the desktop entries' read, started before the bind, used to hand its
        // result to an event loop already ended (SwiftNIO printed an error into the middle of
        // the daemon's own, about every other start).
        for _ in 0..<3 {
            let r = try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--socket", root + "/open/s", "--state", root + "/state", "--apps", root + "/apps"],
                                         environment: ProcessInfo.processInfo.environment, scratch: root, timeout: 20)
            #expect(r.status != 0)
            #expect(r.stderr.contains("the socket folder \(root)/open is writable by others (mode 777)"), "\(r.stderr)")
            #expect(!r.stderr.contains("Cannot schedule tasks"), "\(r.stderr)")
        }
    }

    @Test("clients refuse a socket served by another user",
          .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv to run a daemon as another user"))
    func daemonOfAnotherUser() throws {
        let folder = try TemporaryFolder(prefix: "lsuid")
        defer { folder.remove() }
        let root = folder.path
        try FileManager.default.createDirectory(atPath: root + "/nobody", withIntermediateDirectories: true)
        chmod(root, 0o755)
        chown(root + "/nobody", 65534, 65534)
        let home = root + "/nobody"
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home
        let daemon = try ChildProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", DaemonHarness.binary("launchservicesd"),
                                                           "--socket", home + "/s", "--state", home + "/state", "--apps", home + "/apps"],
                                      environment: environment, stdout: root + "/log", stderr: root + "/log")
        defer { daemon.stop() }
        try waitUntil("the other user's daemon serves", within: 15) { FileManager.default.fileExists(atPath: home + "/s") }
        environment["LAUNCHSERVICES_SOCKET"] = home + "/s"
        let r = try ChildProcess.run(DaemonHarness.binary("lsopen"), ["--json", "x:y"], environment: environment, scratch: root, timeout: 20)
        #expect(r.status == 69)
        #expect(r.errorCode == "daemonUnreachable")
        #expect(r.errorMessage?.contains("runs as uid 65534, not as you (uid 0); refusing to talk to it") == true, "\(r.stdout)")
    }
}
