import ArgumentParser
import CLaunchServicesShim
import Foundation
import LaunchServicesTesting

/// The session-bus rows: the daemon's own D-Bus interface beside a D-Bus call to a C
/// service through the same private dbus-daemon, and `gio open` reaching a native app
/// through the `DBusActivatable` export beside `gio open` through the same entry run as
/// `Exec=lsopen %u`. Their own bus, daemon and XDG folders (`SessionBusFixture`), so what
/// ran before (the echo service stopped by the activation rows) changes nothing here.
extension LSBench {
    func sessionBusRows(_ report: Report, work: String, warm: [UInt64]?) throws {
        report.gap()
        guard let peerBinDir, let dbusDaemon else {
            report.note("session-bus rows: skipped (run through scripts/bench, which builds the D-Bus clients and passes --peer-bin-dir and --dbus-daemon)")
            return
        }
        let folder = work + "/session-bus"
        let peers = DBusPeers(peerBinDir: peerBinDir, work: folder)
        let bus: DBusPeers.Bus
        let fixture: SessionBusFixture
        do {
            try SessionBusFixture.makeFolder(folder)
            bus = try peers.startDBusDaemon(dbusDaemon)
            do {
                fixture = try SessionBusFixture(folder: folder, bus: bus, binDir: binDir, updateDesktopDatabase: updateDesktopDatabase)
            } catch {
                bus.stop()
                throw error
            }
        } catch let unavailable as DBusPeers.Unavailable {
            report.note("session-bus rows: skipped, \(unavailable.reason)")
            return
        }
        defer {
            fixture.stop()
            bus.stop()
        }
        let calls = try busOpens(fixture: fixture, peerBinDir: peerBinDir, count: warm?.count ?? self.warm)
        let echoRow = report.row("D-Bus call via dbus-daemon, same client as Open (peer)", calls.echo)
        let openRow = report.row("Open over D-Bus via dbus-daemon, app warm, vs the call", calls.open, baseline: echoRow)
        if let warm {
            report.row("warm open over the socket vs Open over D-Bus", warm, baseline: openRow)
        }
        guard let gio else {
            report.note("gio open through the DBusActivatable export: skipped, gio is not installed (Debian package libglib2.0-bin)")
            return
        }
        do {
            let (exec, dbus) = try gioRoutes(fixture: fixture, gio: gio, count: cold)
            let execRow = report.row("gio open → Exec=lsopen %u → native app has it", exec)
            report.row("gio open → DBusActivatable → native app has it, vs Exec=", dbus, baseline: execRow)
        } catch let unavailable as DBusPeers.Unavailable {
            report.note("gio open through the DBusActivatable export: skipped, \(unavailable.reason)")
        }
    }

    /// `count` Echo calls and `count` Opens (`xyz:bus/N` to the running xyz) from one
    /// `dbus_ls_open_client` process, in alternating blocks of 10 after 100 untimed of each.
    func busOpens(fixture: SessionBusFixture, peerBinDir: String, count: Int) throws -> (echo: [UInt64], open: [UInt64]) {
        let output = fixture.folder + "/bus-opens.txt"
        let client = try ChildProcess(peerBinDir + "/dbus_ls_open_client", [String(count), "100", "10", "xyz:bus/", "bench.xyz"],
                                      environment: fixture.environment, stdout: output, stderr: output + ".err")
        guard client.wait() == 0 else {
            throw ValidationError("dbus_ls_open_client failed: \((try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "")")
        }
        var echo: [UInt64] = [], open: [UInt64] = []
        for line in try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let nanoseconds = UInt64(fields[1]) else { continue }
            if fields[0] == "echo" { echo.append(nanoseconds) } else if fields[0] == "open" { open.append(nanoseconds) }
        }
        guard echo.count == count, open.count == count else { throw ValidationError("dbus_ls_open_client printed \(echo.count) echo and \(open.count) open samples, not \(count) each") }
        return (echo, open)
    }

    /// `count` samples of each route, in alternating blocks of `desktopBlock` (Exec first, then
    /// D-Bus, then D-Bus first, …) after one untimed, checked open of each. A sample is one
    /// `gio open lsbenchbus:x/ROUTE-N`, from just before the spawn until `bench.busapp`'s own
    /// clock reading for that URL; gio must exit 0. This process is a child subreaper
    /// meanwhile: what gio leaves behind (the Exec route's `lsopen`) comes here and is reaped
    /// by PID; the D-Bus route must leave nothing (no process started for the URL), and the
    /// Exec route must have left an `lsopen` (else GLib did not run the entry's Exec line).
    func gioRoutes(fixture: SessionBusFixture, gio: String, count: Int) throws -> (exec: [UInt64], dbus: [UInt64]) {
        guard ls_set_subreaper(1) == 0 else { throw DBusPeers.Unavailable(reason: "cannot become a child subreaper to reap what gio leaves") }
        defer { _ = ls_set_subreaper(0) }
        let keep = Set(DesktopOpens.children())
        func sample(_ route: String, _ label: String) throws -> UInt64 {
            let url = "\(SessionBusFixture.scheme):x/\(route)-\(label)"
            let output = fixture.folder + "/gio-\(route).log"
            let start = DesktopPeers.now()
            let status = try ChildProcess(gio, ["open", url], environment: route == "dbus" ? fixture.dbusRoute : fixture.execRoute, stdout: output).wait()
            guard status == 0 else { throw DBusPeers.Unavailable(reason: "gio open \(url) (\(route) route) exited with status \(status): \(DesktopPeers.lastLine(output))") }
            let (time, _) = try fixture.appLine(for: url)
            let left = try reapLeftovers(keep: keep, expecting: route == "dbus" ? 0 : 1)
            guard route == "dbus" ? left.isEmpty : left == ["lsopen"] else {
                throw DBusPeers.Unavailable(reason: "gio open \(url) (\(route) route) left \(left.isEmpty ? "no process" : left.joined(separator: ", ")), not \(route == "dbus" ? "none" : "one lsopen")")
            }
            return time - start
        }
        _ = try sample("exec", "warmup")
        _ = try sample("dbus", "warmup")
        var exec: [UInt64] = [], dbus: [UInt64] = []
        for (number, start) in stride(from: 0, to: count, by: Self.desktopBlock).enumerated() {
            for route in number % 2 == 0 ? ["exec", "dbus"] : ["dbus", "exec"] {
                for i in start..<min(count, start + Self.desktopBlock) {
                    let taken = try sample(route, "\(i)")
                    if route == "exec" { exec.append(taken) } else { dbus.append(taken) }
                }
            }
        }
        return (exec, dbus)
    }

    /// Reaps the children not in `keep` (those gio left, reparented here), waiting until
    /// `expecting` of them have exited and none is left running, at most 10 s; returns their
    /// names (from `/proc/PID/stat`, read before each is reaped).
    func reapLeftovers(keep: Set<pid_t>, expecting: Int) throws -> [String] {
        var names: [String] = []
        let deadline = DesktopPeers.now() + 10_000_000_000
        while true {
            let others = DesktopOpens.children().filter { !keep.contains($0) }
            for pid in others {
                // Its name and state from /proc/PID/stat ("PID (COMM) STATE …"), read before
                // it is reaped: only an exited one (Z) is reaped, so none is waited for here.
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                      stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z") else { continue }
                var status: Int32 = 0
                if waitpid(pid, &status, 0) == pid { names.append(String(stat[stat.index(after: open)..<close])) }
            }
            if names.count >= expecting && DesktopOpens.children().allSatisfy({ keep.contains($0) }) { return names }
            guard DesktopPeers.now() < deadline else {
                throw DBusPeers.Unavailable(reason: "what gio left (\(names.joined(separator: ", "))) did not all exit within 10 s")
            }
            usleep(200)  // nothing signals this process when a reparented child exits; bounded above
        }
    }

    /// `--session-bus-only`: the session-bus rows alone (their own bus, daemon and apps).
    func runSessionBusOnly(work: String) throws {
        let report = Report(json: json)
        try sessionBusRows(report, work: work, warm: nil)
        try report.finish()
    }
}
