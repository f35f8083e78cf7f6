import ArgumentParser
import Dispatch
import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesDaemon

/// The registry's scale rows: the daemon's start until it answers (a status query), and
/// until a `canOpen` sent right after that is answered (it needs the whole registry, which is
/// read after the socket serves), with
/// an empty registry and with one of each size asked for (`--registry-apps`, five schemes an
/// app, saved as a scan would save them: one named URL type), then resolution (`canOpen`) in
/// each and the daemon's memory after those trips, against the idle daemon. Each fixture is
/// written in one transaction. The first trip waits for the part of the registry read after
/// the socket serves, so the memory is that of the whole registry in memory.
extension LSBench {
    /// The registry sizes asked for.
    var registrySizes: [Int] {
        get throws {
            let sizes = registryApps.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) > 0 }) else {
                throw ValidationError("--registry-apps takes app counts separated by commas (e.g. 1000,10000,100000), not '\(registryApps)'")
            }
            return sizes.compactMap { $0 }
        }
    }

    func registryScale(_ report: Report, work: String, idle: Row) throws {
        let sizes = try registrySizes
        /// Per start: until the status query is answered (the first answer), and until a
        /// `canOpen` sent right after it is (it waits for the rest of the registry).
        func startSamples(state: String, scheme: String) throws -> (status: [UInt64], canOpen: [UInt64]) {
            var status: [UInt64] = []
            var canOpen: [UInt64] = []
            for n in 0..<starts {
                let socket = work + "/scale-\(n).sock"
                let start = DispatchTime.now().uptimeNanoseconds
                let daemon = try startDaemon(socket: socket, apps: work + "/no-apps", state: state, log: work + "/scale.log", poll: 500)
                defer { daemon.stop() }
                status.append(DispatchTime.now().uptimeNanoseconds - start)
                let client = try LaunchServicesClient(socketPath: socket, program: "lsbench")
                defer { client.close() }
                _ = try client.canOpen(scheme + ":go")
                canOpen.append(DispatchTime.now().uptimeNanoseconds - start)
            }
            return (status, canOpen)
        }
        report.gap()
        let empty = try startSamples(state: work + "/empty-state", scheme: "s0x3")
        let emptyRow = report.row("daemon start → first answer, empty registry (baseline)", empty.status)
        let emptyCanOpenRow = report.row("daemon start → first canOpen, empty registry (baseline)", empty.canOpen)
        for count in sizes {
            let state = work + "/registry-\(count)"
            try Self.writeRegistry(apps: count, into: state)
            let samples = try startSamples(state: state, scheme: "s\(count / 2)x3")
            report.row("daemon start → first answer, \(count) apps / \(count * 5) schemes", samples.status, baseline: emptyRow)
            report.row("daemon start → first canOpen, \(count) apps / \(count * 5) schemes", samples.canOpen, baseline: emptyCanOpenRow)
            let socket = work + "/scale-resolve.sock"
            let daemon = try startDaemon(socket: socket, apps: work + "/no-apps", state: state, log: work + "/scale.log", poll: 500)
            defer { daemon.stop() }
            let client = try LaunchServicesClient(socketPath: socket, program: "lsbench")
            defer { client.close() }
            var resolve: [UInt64] = []
            for i in 0..<2000 {
                let start = DispatchTime.now().uptimeNanoseconds
                let answer = try client.canOpen("s\((i * 7919) % count)x3:go")
                resolve.append(DispatchTime.now().uptimeNanoseconds - start)
                guard answer.canOpen else { throw ValidationError("scheme not resolved") }
            }
            report.row("canOpen round trip in the \(count * 5)-scheme registry", resolve)
            report.add(try DaemonMemory.row("daemon memory with \(count) apps, after the canOpen trips", pid: daemon.pid).against(idle))
        }
    }

    /// `apps` apps registered by hand in `state`'s registry, in one transaction; the store
    /// holds the file exclusively, as the daemon does, so it is closed before a daemon opens it.
    static func writeRegistry(apps count: Int, into state: String) throws {
        let store = try RegistryStore(folder: state)
        let apps = (0..<count).map { i in
            let schemes = (0..<5).map { try! URLScheme(validating: "s\(i)x\($0)") }
            return (app: AppBundle(id: "bench.app\(i)", name: "App \(i)", path: "/nowhere/app\(i).app", executable: "app",
                                   schemes: schemes, urlTypes: [AppBundle.URLType(name: "bench.app\(i).links", schemes: schemes)]),
                    registeredAt: RegistryStore.millisecondsNow())
        }
        try store.save(apps, source: .manual)
        try store.close()
    }

    /// `--registry-only`: the idle daemon (no apps: only the daemon and lsbench are needed),
    /// then the scale rows.
    func runRegistryOnly(work: String) throws {
        let report = Report(json: json)
        let idle: Row
        do {
            let daemon = try startDaemon(socket: work + "/socket", apps: work + "/no-apps", state: work + "/state", log: work + "/daemon.log", poll: 20_000)
            defer { daemon.stop() }
            idle = try DaemonMemory.row("daemon memory, idle after start (baseline)", pid: daemon.pid)
        }
        report.add(idle)
        try registryScale(report, work: work, idle: idle)
        try report.finish()
    }
}
