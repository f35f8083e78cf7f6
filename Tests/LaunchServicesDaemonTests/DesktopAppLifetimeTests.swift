import CLaunchServicesShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesSystemd
import LaunchServicesTesting
import Testing

/// A desktop app is the user's, not the daemon's: it outlives whoever launched it, a
/// launcher that is a child subreaper neither adopts nor ends it when it stops, its exit
/// status is known without being its parent, and under a real `systemd --user` it runs in
/// a transient scope of its own.
@Suite("Desktop apps: not the daemon's", .serialized)
struct DesktopAppLifetimeTests {
    @Test("a launcher that is a child subreaper never adopts a desktop app: its stop (AdoptedProcesses.endAll) ends its own processes, not the app")
    func notAdoptedBySubreaper() async throws {
        guard ls_desktop_launch_uses_siblings() == 1 else { return } // sanitizer builds fork (documented)
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("browser", "exec sleep 600")
        // This process plays the daemon: a child subreaper, for this test only.
        #expect(ls_set_subreaper(1) == 0)
        defer { _ = ls_set_subreaper(0) }
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "browser.desktop", commands: [["browser"]]), grace: .milliseconds(200))
        let app = try #require(outcomes.first?.pid)
        defer { fixture.kill([app]) }
        #expect(outcomes.map(\.kind) == [.running])
        // The waiter that started it (this process's sibling) lets it go at the end of the
        // grace: the app then belongs to whoever adopts it above, never to this process,
        // though this process is a subreaper.
        try waitFor("the waiter to let the app go") {
            guard let parent = Self.parent(of: app) else { return false }
            return parent == getppid() || Self.parent(of: parent) != getppid()
        }
        #expect(Self.parent(of: app) != getpid())
        // A process of the launcher's own, which its stop must end (and reap).
        var own: pid_t = 0
        let spawned = withCStrings(["/bin/sleep", "600"]) { argv in withCStrings([]) { envp in ls_spawn_stdio(&own, "/bin/sleep", argv, envp, 0, 1, 2) } }
        #expect(spawned == 0)
        defer {
            var status: Int32 = 0
            if waitpid(own, &status, WNOHANG) == 0 {
                kill(own, SIGKILL)
                waitpid(own, &status, 0)
            }
        }
        // The daemon's stop, limited to these two so no other test's children are touched.
        let ended = AdoptedProcesses.endAll(excluding: { $0 != app && $0 != own })
        #expect(ended == 1)
        #expect(kill(own, 0) != 0, "the launcher's own process was not ended and reaped")
        #expect(isAlive(app), "the subreaper's stop ended the desktop app")
    }

    @Test("a desktop app outlives the process that launched it")
    func outlivesLauncher() throws {
        guard ls_desktop_launch_uses_siblings() == 1 else { return } // sanitizer builds fork (documented)
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("browser", "exec sleep 600")
        // Everything the forked launcher uses is made here: after a fork of this threaded
        // process the child makes system calls only.
        var results: [Int32] = [-1, -1]
        var sockets: [Int32] = [-1, -1]
        #expect(pipe(&results) == 0)
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0)
        defer { close(results[0]); close(sockets[0]) }
        let browser = fixture.bin + "/browser"
        let argv = [strdup(browser), strdup("https://example.com"), nil]
        let envp = fixture.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        let path = strdup(browser)
        defer { (argv + envp + [path]).forEach { free($0) } }
        let status = argv.withUnsafeBufferPointer { argvBuffer in
            envp.withUnsafeBufferPointer { envpBuffer in
                var app = ls_desktop_process(path: path, argv: argvBuffer.baseAddress, envp: envpBuffer.baseAddress, fds: (-1, -1, -1, -1),
                                             directory: nil, pid_env_index: -1, ignore_sigpipe: 0)
                let (resultFD, reportFD, waiterFD) = (results[1], sockets[0], sockets[1])
                return ForkedChild.run(descriptorLimit: 4096) {
                    // Nothing of the other tests' descriptors stays open here (a script being
                    // written would be busy for them).
                    for fd in Int32(3)..<4096 where fd != resultFD && fd != reportFD && fd != waiterFD { close(fd) }
                    var waiter: pid_t = 0
                    var sibling: Int32 = 0
                    guard ls_desktop_launch(&app, nil, -1, waiterFD, 100, &waiter, &sibling) == 0 else { return 91 }
                    close(waiterFD)
                    var report = ls_desktop_report()
                    var pidfd: Int32 = -1
                    var watch = pollfd(fd: reportFD, events: Int16(POLLIN), revents: 0)
                    guard poll(&watch, 1, 10_000) == 1, ls_desktop_read_report(reportFD, &report, &pidfd) == 1,
                          report.kind == Int32(LS_DESKTOP_STARTED) else { return 92 }
                    var message = (report.pid, waiter)
                    _ = withUnsafeBytes(of: &message) { write(resultFD, $0.baseAddress, 8) }
                    return 0 // the launcher exits; the app must not
                }
            }
        }
        close(results[1])
        close(sockets[1])
        #expect(status == 0)
        var message: (Int32, Int32) = (0, 0)
        #expect(withUnsafeMutableBytes(of: &message) { read(results[0], $0.baseAddress, 8) } == 8)
        let (app, waiter) = message
        defer { fixture.kill([app]) }
        #expect(app > 0)
        // The waiter is this process's child (the forked launcher's sibling): once it has
        // exited too, nothing that started the app is left.
        var reaped: Int32 = 0
        try waitFor("the waiter to exit") { waitpid(waiter, &reaped, WNOHANG) == waiter }
        #expect(isAlive(app), "the desktop app did not outlive its launcher")
        #expect(try fixture.arguments(of: app) == ["https://example.com"])
    }

    /// The parent pid, field 4 of /proc/PID/stat.
    static func parent(of pid: Int32) -> Int32? {
        ProcessAncestry.statFields(of: pid)?.parent
    }

    @Test("the exit status of a process the caller does not reap: from the zombie's /proc entry, then (Linux 6.15+) from the pidfd once reaped")
    func exitStatusOfNonChild() throws {
        let folder = try TemporaryFolder(prefix: "ls-exit")
        defer { _ = folder.remove() }
        let child = try ChildProcess("/bin/sh", ["-c", "exit 5"], stdout: folder.path + "/out")
        let pidfd = ls_pidfd_open(child.pid)
        #expect(pidfd >= 0)
        defer { close(pidfd) }
        try waitFor("the child to exit") { DesktopExitWatch.hasExited(pidfd: pidfd) }
        var status: Int32 = -1
        // Not reaped yet: a zombie.
        #expect(ls_pidfd_exit_status(pidfd, child.pid, &status) == 1)
        #expect(DesktopExitWatch.exitStatus(status) == .exited(5))
        #expect(child.wait() == 5)
        // Reaped by its parent: only the pidfd can still say.
        status = -1
        let known = ls_pidfd_exit_status(pidfd, child.pid, &status)
        if Self.kernelKeepsExitInfo {
            #expect(known == 1 && DesktopExitWatch.exitStatus(status) == .exited(5))
        } else {
            #expect(known == 0)
        }
    }

    /// PIDFD_INFO_EXIT came with Linux 6.15.
    static var kernelKeepsExitInfo: Bool {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard parts.count == 2 else { return false }
        return parts[0] > 6 || (parts[0] == 6 && parts[1] >= 15)
    }

    @Test("under a real systemd --user, a desktop app runs in a transient scope app-launchservices-ID-RANDOM.scope of its own")
    func transientScope() async throws {
        guard let manager = try SystemdUserManager.start() else {
            print("DesktopAppLifetimeTests.transientScope: /lib/systemd/systemd is not installed; nothing to check")
            return
        }
        defer { manager.stop() }
        let fixture = try DesktopFixture()
        defer { fixture.remove() }
        try fixture.handler("org.example.Browser", "exec sleep 600")
        let outcomes = try await fixture.launch(DesktopLaunchRequest(desktopID: "org.example-Browser.desktop", commands: [["org.example.Browser"]], name: "Browser"),
                                                grace: .milliseconds(200), environment: ["XDG_RUNTIME_DIR": manager.runtime])
        let pid = try #require(outcomes.first?.pid)
        defer { fixture.kill([pid]) }
        #expect(outcomes.map(\.kind) == [.running])
        var scope: String?
        for _ in 0..<600 where scope == nil {
            scope = try await fixture.running().first { $0.pid == pid }?.scope
            if scope == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let unit = try #require(scope, "no scope after 30 s: \(fixture.logLines.withLockedValue { $0 })")
        // The ID's own dash is escaped, so the name splits back into launcher, ID and random.
        #expect(unit.hasPrefix("app-launchservices-org.example\\x2dBrowser-") && unit.hasSuffix(".scope"))
        try waitFor("the app in its scope") {
            let status = try manager.systemctl("status", "--no-pager", unit)
            return status.stdout.contains("\(pid)") && status.stdout.contains("Browser (started by launchservicesd)")
        }
        let cgroup = try String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)
        #expect(cgroup.contains("app.slice/" + unit) || cgroup.contains(unit), "cgroup: \(cgroup)")
        #expect(try manager.systemctl("is-active", unit).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "active")
    }

    @Test("scope names follow systemd's convention and escaping, within 255 bytes")
    func scopeNames() {
        #expect(TransientScope.unitName(launcher: "launchservices", appID: "org.example.Mail", random: 0xABC) == "app-launchservices-org.example.Mail-0000000000000abc.scope")
        #expect(TransientScope.unitName(launcher: "launchservices", appID: "my-app", random: 1) == "app-launchservices-my\\x2dapp-0000000000000001.scope")
        #expect(TransientScope.unitName(launcher: "launchservices", appID: ".hidden é", random: 1) == "app-launchservices-\\x2ehidden\\x20\\xc3\\xa9-0000000000000001.scope")
        let long = TransientScope.unitName(launcher: "launchservices", appID: String(repeating: "-", count: 300), random: 1)
        #expect(long.utf8.count <= 255 && long.hasSuffix("\\x2d-0000000000000001.scope"))
        #expect(TransientScope.address(socketPath: "/run/user/0/systemd/private") == "unix:path=/run/user/0/systemd/private")
        #expect(TransientScope.address(socketPath: "/tmp/a b;c") == "unix:path=/tmp/a%20b%3bc")
    }
}
