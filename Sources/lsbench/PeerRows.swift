import ArgumentParser
import Foundation

/// The rows that put the project beside its D-Bus peers: the warm open against one D-Bus
/// method call to a running service (both are a caller reaching a running program through a
/// broker and back), and the whole `lsopen URL` process against the whole `dbus-send`
/// process (both are a command a script or desktop runs to reach that program). The project's
/// samples are the ones measured earlier in the same run.
extension LSBench {
    func peerRows(_ report: Report, work: String, warm: [UInt64], lsopen: [UInt64], throughput: [Int: Row], cold: ColdFigures, ours: OurDaemon) throws {
        report.gap()
        guard let peerBinDir, let dbusDaemon, let dbusSend else {
            report.note("D-Bus peers: skipped (run through scripts/bench, which builds the echo service and passes --peer-bin-dir, --dbus-daemon and --dbus-send)")
            return
        }
        let peers = DBusPeers(peerBinDir: peerBinDir, work: work)
        do {
            let bus = try peers.startDBusDaemon(dbusDaemon)
            defer { bus.stop() }
            let calls = try peers.calls(on: bus, count: warm.count)
            let sends = try peers.sends(dbusSend: dbusSend, on: bus, count: lsopen.count)
            let callRow = report.row("D-Bus call via dbus-daemon, libdbus client (peer)", calls)
            report.row("warm open vs the D-Bus call via dbus-daemon", warm, baseline: callRow)
            let sendRow = report.row("dbus-send --print-reply via dbus-daemon, whole process (peer)", sends)
            report.row("lsopen URL, whole process vs dbus-send via dbus-daemon", lsopen, baseline: sendRow)
            try peerThroughputRows(report, peers: peers, bus: bus, ours: throughput)
            try alternatingOneClientRows(report, peers: peers, bus: bus, ours: ours)
            report.gap()
            try coldPeerRows(report, peers: peers, bus: bus, ours: cold)
        }
        guard let dbusBrokerLaunch, let socketActivate else {
            report.note("D-Bus peer dbus-broker: skipped (\(dbusBrokerLaunch == nil ? "dbus-broker-launch is not installed" : "systemd-socket-activate is not installed"))")
            return
        }
        let journal = FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")
        guard journal || getuid() == 0 else {
            report.note("D-Bus peer dbus-broker: skipped, dbus-broker-launch logs only to the systemd journal and there is none here; giving it a private one needs root (a private mount namespace)")
            return
        }
        let broker: DBusPeers.Bus
        do {
            broker = try peers.startDBusBroker(launcher: dbusBrokerLaunch, socketActivate: socketActivate, privateJournal: !journal)
        } catch let unavailable as DBusPeers.Unavailable {
            report.note("D-Bus peer dbus-broker: skipped, its launcher cannot run here: \(unavailable.reason)")
            return
        }
        defer { broker.stop() }
        let calls = try peers.calls(on: broker, count: warm.count)
        let sends = try peers.sends(dbusSend: dbusSend, on: broker, count: lsopen.count)
        if !journal { report.note("(dbus-broker-launch runs with a private journal socket: this machine has no systemd-journald)") }
        let callRow = report.row("D-Bus call via dbus-broker, libdbus client (peer)", calls)
        report.row("warm open vs the D-Bus call via dbus-broker", warm, baseline: callRow)
        let sendRow = report.row("dbus-send --print-reply via dbus-broker, whole process (peer)", sends)
        report.row("lsopen URL, whole process vs dbus-send via dbus-broker", lsopen, baseline: sendRow)
        try peerThroughputRows(report, peers: peers, bus: broker, ours: throughput)
        try alternatingOneClientRows(report, peers: peers, bus: broker, ours: ours)
    }

    /// The throughput rows' peer: as many libdbus client processes as each throughput row,
    /// each making the same number of calls, started together the same way; then our row
    /// against it (a ratio above 1 means more opens per second than calls per second).
    func peerThroughputRows(_ report: Report, peers: DBusPeers, bus: DBusPeers.Bus, ours: [Int: Row]) throws {
        for clients in throughputClients {
            let result = try peerCalls(clients: clients, peers: peers, bus: bus, label: bus.name)
            let peer = report.add(Row(name: "D-Bus calls/s via \(bus.name), \(clients) client process\(clients == 1 ? "" : "es") (peer)", count: result.opens,
                                      value: .throughput(perSecond: Double(result.opens) / result.seconds, p99: Row.percentile99(result.samples.sorted()))))
            if let row = ours[clients] {
                report.add(Row(name: "warm opens/s vs D-Bus calls/s via \(bus.name), \(clients) client\(clients == 1 ? "" : "s")", count: row.count, value: row.value).against(peer))
            }
        }
    }

    /// Where the bench's own daemon listens and where its app logs, for rows measured
    /// while the peers run.
    struct OurDaemon {
        let socket: String
        let work: String
        let appLog: String
    }

    /// One client's warm opens per second against one client's calls per second through the
    /// peer, taken in alternating rounds (ours then the peer's, then the peer's first, …) of
    /// `throughputOpens` each. The separate one-client rows are minutes apart, and on a VM
    /// one client's rate moves by tens of percent between minutes with the cost of a
    /// wake-up; alternated, those swings fall on both alike. Rates are all the round's
    /// opens (or calls) over their summed durations; p99 over every single one.
    func alternatingOneClientRows(_ report: Report, peers: DBusPeers, bus: DBusPeers.Bus, ours: OurDaemon) throws {
        guard alternatingRounds > 0 else { return }
        var mine: [Throughput.Result] = [], theirs: [Throughput.Result] = []
        for round in 0..<alternatingRounds {
            let peerFirst = round % 2 == 1
            if peerFirst { theirs.append(try peerCalls(clients: 1, peers: peers, bus: bus, label: bus.name + "-alternating")) }
            mine.append(try checkedThroughput(clients: 1, socket: ours.socket, work: ours.work, appLog: ours.appLog))
            if !peerFirst { theirs.append(try peerCalls(clients: 1, peers: peers, bus: bus, label: bus.name + "-alternating")) }
        }
        func row(_ name: String, _ results: [Throughput.Result]) -> Row {
            let opens = results.reduce(0) { $0 + $1.opens }
            let seconds = results.reduce(0) { $0 + $1.seconds }
            return Row(name: name, count: opens, value: .throughput(perSecond: Double(opens) / seconds, p99: Row.percentile99(results.flatMap(\.samples).sorted())))
        }
        let peer = report.add(row("D-Bus calls/s via \(bus.name), 1 client, alternated (peer)", theirs))
        report.add(row("1 client alternated: opens/s vs calls/s via \(bus.name)", mine).against(peer))
    }

    /// `clients` `dbus_echo_client` processes (their `sync` mode), each making `throughputOpens`
    /// calls through `bus`, started together as the throughput rows' clients are.
    func peerCalls(clients: Int, peers: DBusPeers, bus: DBusPeers.Bus, label: String) throws -> Throughput.Result {
        try Throughput.run(clients: clients, count: throughputOpens, work: peers.work, label: label, environment: bus.environment) {
            [peers.peerBinDir + "/dbus_echo_client", String(throughputOpens), "10", "sync"]
        }
    }
}
