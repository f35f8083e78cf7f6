#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// Lifecycle scenarios on the real daemon, in-process and deterministic (`InProcessDaemon`):
/// no processes, no sockets, no sleeps; time moves only with `advance(by:)`.
@Suite struct InProcessLifecycleTests {
    static let notes = AppBundle.simulated("com.example.notes", schemes: ["notes"])
    static let mail = AppBundle.simulated("com.example.mail", schemes: ["mail"])

    @Test("cold open: the app is launched through willFinishLaunching, didFinishLaunching, then open")
    func coldOpen() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        #expect(client.identity == SourceIdentity.user)
        let outcome = try #require(client.open("notes://today"))
        #expect(outcome.opened)
        #expect(outcome.launched)
        #expect(outcome.method == .open)
        #expect(outcome.timings.map(\.phase) == [.launch, .willFinishLaunching, .didFinishLaunching, .openURL])
        let app = try #require(daemon.app("com.example.notes"))
        #expect(app.events == [
            .launchMethod(.willFinishLaunching, url: "notes://today"),
            .launchMethod(.didFinishLaunching, url: "notes://today"),
            .notified(.didBecomeActive),
            .delivered(url: "notes://today", sourceApplication: SourceIdentity.user),
        ])
        #expect(daemon.state(of: "com.example.notes") == .active)
        #expect(daemon.frontmost == "com.example.notes")
    }
}

extension InProcessLifecycleTests {
    @Test("warm open: a running app gets only the URL, and is not launched again")
    func warmOpen() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        _ = try #require(client.open("notes://1"))
        let second = try #require(client.open("notes://2"))
        #expect(second.opened)
        #expect(!second.launched)
        #expect(second.timings.map(\.phase) == [.openURL])
        #expect(daemon.launches(of: "com.example.notes") == 1)
        #expect(daemon.app("com.example.notes")?.deliveredURLs == ["notes://1", "notes://2"])
    }

    @Test("an app that declines the URL: notHandled, and it stays running and frontmost")
    func declinedOpen() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        daemon.behave("com.example.notes") { $0.open = .veto }
        let outcome = try #require(daemon.connect().open("notes://secret"))
        #expect(outcome.error?.code == .notHandled)
        #expect(outcome.error?.phase == .openURL)
        #expect(daemon.state(of: "com.example.notes") == .active)
    }

    @Test("NO from a launch method: vetoed naming that phase; the app still finishes launching and gets no URL, whether its runtime drops the delivery written at the hello or is earlier and gets none",
          arguments: [LaunchPhase.willFinishLaunching, .didFinishLaunching], [true, false])
    func vetoedLaunch(phase: LaunchPhase, dropsVetoedLaunchDelivery: Bool) throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        daemon.behave("com.example.notes") {
            if phase == .willFinishLaunching { $0.willFinishLaunching = .veto } else { $0.didFinishLaunching = .veto }
            $0.dropsVetoedLaunchDelivery = dropsVetoedLaunchDelivery
        }
        let outcome = try #require(daemon.connect().open("notes://x"))
        #expect(outcome.error?.code == .vetoed)
        #expect(outcome.error?.phase == phase)
        let app = try #require(daemon.app("com.example.notes"))
        #expect(app.deliveredURLs.isEmpty)
        #expect(app.events.contains(.launchMethod(.didFinishLaunching, url: "notes://x")))
        #expect(app.events.contains(.notified(.didBecomeActive)))
        #expect(daemon.state(of: "com.example.notes") == .active)
        // A later open arrives after anything sent before it.
        #expect(try #require(daemon.connect().open("notes://later")).opened)
        #expect(app.deliveredURLs == ["notes://later"])
    }

    @Test("an app hung in willFinishLaunching: the caller hears timeout at the 5 s deadline and the app is killed")
    func hungLaunch() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        daemon.behave("com.example.notes") { $0.willFinishLaunching = .hang }
        let client = daemon.connect()
        let id = client.send(.open(url: "notes://x", annotation: nil))
        #expect(client.outcome(of: id) == nil, "no answer before the deadline")
        daemon.advance(by: .milliseconds(4_900))
        #expect(client.outcome(of: id) == nil, "still none at 4.9 s")
        daemon.advance(by: .milliseconds(200))
        let outcome = try #require(client.outcome(of: id))
        #expect(outcome.error?.code == .timeout)
        #expect(outcome.error?.phase == .willFinishLaunching)
        let app = try #require(daemon.app("com.example.notes"))
        #expect(app.events.last == .signaled(SIGKILL))
        #expect(!app.isAlive)
        #expect(daemon.state(of: "com.example.notes") == .notRunning)

        daemon.behave("com.example.notes") { $0.willFinishLaunching = .accept }
        #expect(client.open("notes://y")?.launched == true, "the next open launches it afresh")
        #expect(daemon.launches(of: "com.example.notes") == 2)
    }

    @Test("an app hung in open: timeout naming openURL, and the app is ended (a hung app gets no next open)")
    func hungInOpen() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        _ = try #require(client.open("notes://1"))
        daemon.behave("com.example.notes") { $0.open = .hang }
        let id = client.send(.open(url: "notes://2", annotation: nil))
        daemon.advance(by: .seconds(6))
        let outcome = try #require(client.outcome(of: id))
        #expect(outcome.error?.code == .timeout)
        #expect(outcome.error?.phase == .openURL)
        #expect(daemon.app("com.example.notes")?.isAlive == false)
        #expect(daemon.log.contains { $0.contains("terminating com.example.notes") && $0.contains("did not finish openURL") })
    }

    @Test("an app that exits during didFinishLaunching: the caller hears crashed, and the next open is cold")
    func crashDuringLaunch() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        daemon.behave("com.example.notes") { $0.didFinishLaunching = .exit(3) }
        let client = daemon.connect()
        let outcome = try #require(client.open("notes://x"))
        #expect(outcome.error?.code == .crashed)
        #expect(outcome.error?.phase == .didFinishLaunching)
        #expect(daemon.state(of: "com.example.notes") == .notRunning)
        daemon.behave("com.example.notes") { $0.didFinishLaunching = .accept }
        #expect(client.open("notes://y")?.launched == true)
    }

    @Test("a launch that fails: launchFailed with the launcher's reason")
    func launchFails() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        daemon.behave("com.example.notes") { $0.launchFailure = "/simulated/notes: No such file or directory" }
        let outcome = try #require(daemon.connect().open("notes://x"))
        #expect(outcome.error?.code == .launchFailed)
        #expect(outcome.error?.message.contains("No such file or directory") == true)
        #expect(daemon.state(of: "com.example.notes") == .notRunning)
    }

    @Test("no handler and invalid URLs are refused by name, and nothing is launched")
    func refusedURLs() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        let unknown = try #require(client.open("nothing://x"))
        #expect(unknown.error?.code == .noHandler)
        #expect(unknown.error?.message.contains("'nothing'") == true)
        let invalid = try #require(client.open("not a url"))
        #expect(invalid.error?.code == .invalidURL)
        #expect(daemon.launches(of: "com.example.notes") == 0)
    }

    @Test("a second app takes the front; the first is suspended after 30 s in the background and resumed by its next open")
    func suspendAndResume() throws {
        let daemon = InProcessDaemon(apps: [Self.notes, Self.mail])
        let client = daemon.connect()
        _ = try #require(client.open("notes://1"))
        _ = try #require(client.open("mail://1"))
        let notes = try #require(daemon.app("com.example.notes"))
        #expect(daemon.state(of: "com.example.notes") == .background)
        #expect(notes.events.suffix(2) == [.notified(.willResignActive), .notified(.didEnterBackground)])
        daemon.advance(by: .seconds(29))
        #expect(!notes.isSuspended)
        daemon.advance(by: .seconds(2))
        #expect(notes.isSuspended)
        #expect(daemon.state(of: "com.example.notes") == .suspended)

        let resumed = try #require(client.open("notes://2"))
        #expect(resumed.opened)
        #expect(!resumed.launched)
        #expect(!notes.isSuspended)
        #expect(notes.events.contains(.signaled(SIGCONT)))
        #expect(notes.deliveredURLs == ["notes://1", "notes://2"])
        #expect(daemon.launches(of: "com.example.notes") == 1)
    }

    @Test("more live apps than allowed: the least recently used suspended one is ended")
    func eviction() throws {
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.background.maximumLiveApps = 2
        let maps = AppBundle.simulated("com.example.maps", schemes: ["maps"])
        let daemon = InProcessDaemon(configuration: configuration, apps: [Self.notes, Self.mail, maps])
        let client = daemon.connect()
        _ = try #require(client.open("notes://1"))
        _ = try #require(client.open("mail://1"))
        daemon.advance(by: .seconds(31))
        #expect(daemon.state(of: "com.example.notes") == .suspended)
        _ = try #require(client.open("maps://1"))
        #expect(daemon.app("com.example.notes")?.isAlive == false)
        #expect(daemon.app("com.example.notes")?.events.last == .signaled(SIGKILL))
        #expect(daemon.app("com.example.mail")?.isAlive == true)
        #expect(daemon.log.contains { $0.contains("terminating com.example.notes") && $0.contains("least recently used suspended") })
    }

    @Test("an app that exits while idle is forgotten; the next open is cold")
    func exitWhileIdle() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        _ = try #require(client.open("notes://1"))
        try #require(daemon.app("com.example.notes")).exit(.exited(0))
        daemon.settle()
        #expect(daemon.state(of: "com.example.notes") == .notRunning)
        #expect(daemon.frontmost == nil)
        #expect(client.open("notes://2")?.launched == true)
    }

    @Test("opens queued for one app take turns by caller: a second caller waits one turn, not five")
    func fairTurns() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let flooder = daemon.connect()
        let other = daemon.connect()
        let ids = (1...5).map { flooder.send(.open(url: "notes://a\($0)", annotation: nil)) }
        let otherID = other.send(.open(url: "notes://b1", annotation: nil))
        daemon.settle()
        #expect(daemon.app("com.example.notes")?.deliveredURLs == ["notes://a1", "notes://b1", "notes://a2", "notes://a3", "notes://a4", "notes://a5"])
        #expect(other.outcome(of: otherID)?.opened == true)
        #expect(ids.allSatisfy { flooder.outcome(of: $0)?.opened == true })
    }

    @Test("a caller that disconnects drops its queued opens: they are never delivered")
    func disconnectWithdraws() throws {
        // One open at a time, so the leaver's opens queue rather than join the hung one.
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.maximumOpensInFlightPerApp = 1
        let daemon = InProcessDaemon(configuration: configuration, apps: [Self.notes])
        let first = daemon.connect()
        _ = try #require(first.open("notes://warm"))
        daemon.behave("com.example.notes") { $0.open = .hang }
        let hung = first.send(.open(url: "notes://hung", annotation: nil))
        let leaver = daemon.connect()
        for n in 1...3 { leaver.send(.open(url: "notes://gone\(n)", annotation: nil)) }
        daemon.settle()
        leaver.disconnect()
        daemon.behave("com.example.notes") { $0.open = .accept }
        daemon.advance(by: .seconds(6))
        #expect(first.outcome(of: hung)?.error?.code == .timeout)
        #expect(first.open("notes://after")?.opened == true)
        let delivered = (daemon.app("com.example.notes")?.deliveredURLs ?? [])
        #expect(!delivered.contains { $0.hasPrefix("notes://gone") })
    }

    @Test("one connection may keep only maximumPendingRequests opens waiting; the rest are refused by name")
    func pendingLimit() throws {
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.connectionLimits.maximumPendingRequests = 3
        let daemon = InProcessDaemon(configuration: configuration, apps: [Self.notes])
        daemon.behave("com.example.notes") { $0.open = .hang }
        let client = daemon.connect()
        let ids = (1...5).map { client.send(.open(url: "notes://\($0)", annotation: nil)) }
        daemon.settle()
        let refused = ids.compactMap { client.outcome(of: $0) }
        #expect(refused.count == 2)
        #expect(refused.allSatisfy { $0.error?.code == .unavailable && $0.error?.message.contains("connections.maximumPendingRequests") == true })
    }

    @Test("shutdown answers every waiting caller, resumes suspended apps, and ends once every app has exited")
    func shutdown() throws {
        let daemon = InProcessDaemon(apps: [Self.notes, Self.mail])
        let client = daemon.connect()
        _ = try #require(client.open("notes://1"))
        _ = try #require(client.open("mail://1"))
        daemon.advance(by: .seconds(31))
        let notes = try #require(daemon.app("com.example.notes"))
        #expect(notes.isSuspended)
        daemon.behave("com.example.mail") { $0.open = .hang }
        let waiting = client.send(.open(url: "mail://2", annotation: nil))
        daemon.settle()
        #expect(daemon.shutdown())
        #expect(client.outcome(of: waiting)?.error?.code == .unavailable)
        #expect(notes.events.contains(.signaled(SIGCONT)))
        #expect(daemon.allAppsExited)
    }

    @Test("shutdown kills an app that ignores its closed connection once the grace period is over")
    func shutdownKillsStragglers() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        daemon.behave("com.example.notes") { $0.exitsWhenDisconnected = false }
        _ = try #require(daemon.connect().open("notes://1"))
        #expect(!daemon.shutdown())
        daemon.advance(by: .seconds(3))
        #expect(daemon.app("com.example.notes")?.events.last == .signaled(SIGKILL))
        #expect(daemon.allAppsExited)
    }

    @Test("request id 0 is a protocol violation: named, and the connection is closed")
    func requestIDZero() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        client.sendRaw(Envelope(id: 0, .open(url: "notes://x", annotation: nil)))
        let failure = client.received().first { if case .failure = $0.message { return true } else { return false } }
        guard case .failure(let error)? = failure?.message else { Issue.record("no failure frame"); return }
        #expect(error.code == .protocolError)
        #expect(error.message.contains("request id 0"))
        daemon.advance(by: .seconds(3))
        #expect(!client.isConnected)
        #expect(daemon.launches(of: "com.example.notes") == 0)
    }

    @Test("a peer that never says hello is closed at connections.firstMessageSeconds")
    func silentPeer() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let silent = daemon.connect(greet: false)
        daemon.advance(by: .seconds(9))
        #expect(silent.isConnected)
        daemon.advance(by: .seconds(4))
        #expect(!silent.isConnected)
        #expect(daemon.log.contains { $0.contains("connections.firstMessageSeconds") })
    }

    @Test("canOpenURL: true with the handler's id for the user's tools, false for an unclaimed scheme")
    func canOpen() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let client = daemon.connect()
        #expect(client.answer(to: client.send(.canOpen(url: "notes://x"))) == .canOpenResult(canOpen: true, app: "com.example.notes"))
        #expect(client.answer(to: client.send(.canOpen(url: "nothing://x"))) == .canOpenResult(canOpen: false, app: nil))
        #expect(daemon.launches(of: "com.example.notes") == 0)
    }

    @Test("a callback address: the caller that reserved it gets the callback once, and the opener hears opened")
    func callbackAddress() throws {
        let daemon = InProcessDaemon(apps: [Self.notes])
        let waiter = daemon.connect()
        guard case .callbackAddress(let base)? = waiter.answer(to: waiter.send(.awaitCallback)) else {
            Issue.record("no callback address")
            return
        }
        let replier = daemon.connect()
        let first = try #require(replier.open(base + "?result=42"))
        #expect(first.opened)
        let callback = waiter.received().first { if case .callback = $0.message { return true } else { return false } }
        #expect(callback?.message == .callback(url: base + "?result=42", sourceApplication: SourceIdentity.user))
        #expect(replier.open(base + "?again")?.error?.code == .noHandler, "an address is used once")
    }
}

extension InProcessLifecycleTests {
    /// Starts `sleep 30` with SIGTERM at its default action and unblocked (the test runner's
    /// threads may block or ignore it, and both carry across exec).
    func spawnSleeper() throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("30"), nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, "/bin/sleep", nil, &attributes, argv, environ)
        try #require(rc == 0)
        return pid
    }

    @Test("an in-process daemon's shutdown leaves the test process's own children alone")
    func shutdownSparesHostChildren() throws {
        let child = try spawnSleeper()
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        let daemon = InProcessDaemon(apps: [Self.notes])
        _ = try #require(daemon.connect().open("notes://1"))
        #expect(daemon.shutdown())
        usleep(100_000)
        var status: Int32 = 0
        #expect(waitpid(child, &status, WNOHANG) == 0, "the host's child was signalled by the in-process daemon")
    }
}

extension InProcessLifecycleTests {
    @Test("the README's InProcessDaemon example")
    func readmeExample() {
        let daemon = InProcessDaemon(apps: [.simulated("com.example.notes", schemes: ["notes"])])
        daemon.behave("com.example.notes") { $0.willFinishLaunching = .hang }
        let client = daemon.connect()
        let id = client.send(.open(url: "notes://today", annotation: nil))
        daemon.advance(by: .seconds(6))
        #expect(client.outcome(of: id)?.error?.code == .timeout)
    }
}
