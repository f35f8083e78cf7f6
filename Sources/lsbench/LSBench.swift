import ArgumentParser
import CLaunchServicesShim
import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesDaemon
import LaunchServicesProtocol
import LaunchServicesTesting

/// `lsbench`: measures the open path against baselines taken in the same run, on the same
/// machine, and prints medians, p99 and the ratios. Run through `scripts/bench`.
@main
struct LSBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsbench",
        abstract: "Benchmark warm and cold opens against same-run baselines.")

    @Option(help: "Folder holding the built executables (launchservicesd, lsopen, xyz).")
    var binDir: String

    @Option(help: "Warm opens to time.")
    var warm = 3000

    @Option(help: "x-callback-url round trips and pasteboard copies to time.")
    var callbacks = 1000

    @Option(help: "Cold opens to time.")
    var cold = 60

    @Option(help: "Microseconds of nothing before each sample of the cold rows (the static floor, the app's start, the cold open), which alternate.")
    var coldPause: UInt32 = 2000

    @Option(help: "Whole lsopen processes to time.")
    var processes = 150

    @Option(help: "Apps in each large registry (5 schemes each), separated by commas.")
    var registryApps = "1000,10000,100000"

    @Flag(help: "Run only the registry's scale rows (starts, canOpen and memory at each --registry-apps size), after the idle daemon's memory.")
    var registryOnly = false

    @Option(help: "Daemon starts to time for each registry size.")
    var starts = 10

    @Option(help: "Folder holding the compiled D-Bus peers (dbus_echo_service, dbus_echo_client); without it the peers are skipped.")
    var peerBinDir: String?

    @Option(help: "dbus-daemon executable, for the D-Bus peer rows.")
    var dbusDaemon: String?

    @Option(help: "dbus-send executable, for the D-Bus peer rows.")
    var dbusSend: String?

    @Option(help: "dbus-broker-launch executable; without it the dbus-broker rows are skipped.")
    var dbusBrokerLaunch: String?

    @Option(help: "systemd-socket-activate executable (hands dbus-broker-launch its socket).")
    var socketActivate: String?

    @Option(help: "gio executable, for the gio open peer rows.")
    var gio: String?

    @Option(help: "xdg-open executable, for the xdg-open peer rows.")
    var xdgOpen: String?

    @Option(help: "xdg-mime executable, for the xdg-mime query peer rows.")
    var xdgMime: String?

    @Option(help: "update-desktop-database executable (indexes the desktop peers' private handler).")
    var updateDesktopDatabase: String?

    @Option(help: "xdg-open runs to time (about 50 ms each; default: a fifth of --cold, at least 3).")
    var xdgOpenProcesses: Int?

    @Option(help: "Desktop entries in the layout of the desktop-entries start rows.")
    var desktopEntries = 2000

    @Option(help: "lsopen runs to a desktop entry whose handler stays alive (each waits the daemon's 0.5 s grace).")
    var desktopRunningOpens = 20

    @Flag(help: "Run only the desktop-entry rows: lsopen to a desktop entry beside gio open and xdg-open, and the start with --desktop-entries entries.")
    var desktopOnly = false

    @Flag(help: "Run only the cold-open rows: the static floor, starting the app executable, and the cold open, with each launch phase's median.")
    var coldOnly = false

    @Option(help: "The daemon's prewriteLaunchMethods for the run (default: the daemon's own default).")
    var prewriteLaunchMethods: Bool?

    @Flag(help: "Run only the session-bus rows: Open over D-Bus beside a D-Bus call through the same private bus, and gio open through the DBusActivatable export beside gio open through Exec=lsopen %u.")
    var sessionBusOnly = false

    @Option(help: "Write the start rows' layout of --desktop-entries entries into this new folder, print the environment a daemon reads it with, and exit (to profile by hand).")
    var writeDesktopLayout: String?

    @Option(help: "Write the scale rows' registry of the first --registry-apps size into this new state folder and exit (to profile a daemon holding it by hand).")
    var writeRegistry: String?

    @Option(help: "Warm opens before reading the daemon's memory again.")
    var rssOpens = 100_000

    @Option(parsing: .upToNextOption, help: "Concurrent client processes for the throughput rows (one row each).")
    var throughputClients = [1, 10, 100]

    @Option(help: "Warm opens each throughput client makes.")
    var throughputOpens = 3000

    @Option(help: "Rounds of one client's opens alternating with one client's D-Bus calls, beside each bus (0: none).")
    var alternatingRounds = 6

    @Option(help: .hidden)
    var throughputChild: String?

    @Flag(help: "Print one JSON document (machine, date, rows) instead of the table.")
    var json = false

    @Flag(help: "Internal: echo frames on fd 3 (the round-trip baseline's far end).")
    var echoChild = false

    mutating func run() throws {
        if echoChild { Echo.serve() }
        if let writeDesktopLayout { return try writeLayout(writeDesktopLayout) }
        if let writeRegistry { return try Self.writeRegistry(apps: try registrySizes[0], into: writeRegistry) }
        if let throughputChild { Throughput.child(socket: throughputChild, count: throughputOpens) }
        let work = try TemporaryFolder(prefix: "lsbench")
        defer { work.remove() }
        // Installed copies, not the linker's files (InstalledCopies.swift).
        binDir = try InstalledCopies.install(from: binDir, into: work.path + "/bin")
        if desktopOnly { return try runDesktopOnly(work: work.path) }
        if sessionBusOnly { return try runSessionBusOnly(work: work.path) }
        if registryOnly { return try runRegistryOnly(work: work.path) }
        try assemble(into: work.path + "/apps")
        let socket = work.path + "/socket"
        // App output to a file that is never rotated during the run: the throughput rows
        // count each delivery in xyz's log.
        let config = work.path + "/launchservicesd.json"
        let prewrite = prewriteLaunchMethods.map { #", "prewriteLaunchMethods": \#($0)"# } ?? ""
        try #"{"appLogs": {"destination": "files", "maximumBytes": 1073741824}\#(prewrite)}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try startDaemon(socket: socket, apps: work.path + "/apps", state: work.path + "/state", log: work.path + "/daemon.log", poll: 20_000,
                                     extra: ["--config", config])
        defer { daemon.stop() }

        let report = Report(json: json)
        if coldOnly {
            let client = try LaunchServicesClient(socketPath: socket, program: "lsbench")
            defer { client.close() }
            _ = try client.open("xyz:warmup")
            _ = try coldOpenRows(report, client: client, work: work.path, daemon: daemon.pid)
            return try report.finish()
        }
        let idle = try DaemonMemory.row("daemon memory, idle after start (baseline)", pid: daemon.pid)

        // Warm open vs. the floor: one cross-process round trip over a Unix socket.
        let rtt = try Echo.measure(binary: CommandLine.arguments[0], count: warm)
        let client = try LaunchServicesClient(socketPath: socket, program: "lsbench")
        defer { client.close() }
        _ = try client.open("xyz:warmup")
        var warmSamples: [UInt64] = []
        for i in 0..<warm {
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome = try client.open("xyz:warm/\(i)")
            warmSamples.append(DispatchTime.now().uptimeNanoseconds - start)
            guard outcome.opened else { throw ValidationError("warm open failed: \(outcome.error?.message ?? "?")") }
        }
        let rttRow = report.row("round trip, POSIX socketpair, process to process (baseline)", rtt)
        let warmRow = report.row("warm open: caller → daemon → app → daemon → caller", warmSamples, baseline: rttRow)

        // Returning control: reserve an address, open wordrev with it, wait for its x-success
        // (what `lsopen --wait` does) vs. the warm open above.
        _ = try client.open("wordrev://x-callback-url/reverse?word=warmup")
        var callbackSamples: [UInt64] = []
        for i in 0..<callbacks {
            let start = DispatchTime.now().uptimeNanoseconds
            let (id, address) = try client.reserveCallback()
            let outcome = try client.open("wordrev://x-callback-url/reverse?word=w\(i)&x-success=" + PercentEncoding.encodeComponent(address + "/success"))
            let callback = try client.waitForCallback(id: id, until: .now + .seconds(10))
            callbackSamples.append(DispatchTime.now().uptimeNanoseconds - start)
            guard outcome.opened, callback.url.hasSuffix("word=" + String("w\(i)".reversed())) else { throw ValidationError("callback round trip failed: \(outcome.error?.message ?? callback.url)") }
        }
        report.row("x-callback: reserve, open wordrev, x-success back", callbackSamples, baseline: warmRow)

        // The pasteboard: copy 1 KiB and paste it back, vs. the bare round trip (×2).
        let kilobyte = [PasteboardItem(type: PasteboardType.data, data: [UInt8](repeating: 0x5A, count: 1024))]
        var pasteSamples: [UInt64] = []
        for _ in 0..<callbacks {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try client.pasteboard(PasteboardRequest(.copy, name: "bench", items: kilobyte))
            let pasted = try client.pasteboard(PasteboardRequest(.paste, name: "bench"))
            pasteSamples.append(DispatchTime.now().uptimeNanoseconds - start)
            guard pasted.items == kilobyte else { throw ValidationError("the pasteboard did not return what was copied") }
        }
        report.row("pasteboard: copy + paste 1 KiB (baseline 2 trips)", pasteSamples, baseline: Row.latency("two round trips", rtt.map { $0 * 2 }))
        try MachineCosts.rows(report, binary: CommandLine.arguments[0], count: warm, baseline: rttRow)

        let coldSamples = try coldOpenRows(report, client: client, work: work.path, daemon: daemon.pid)

        // The whole `lsopen` command vs. starting `lsopen --help`.
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHSERVICES_SOCKET"] = socket
        let helpSamples = try (0..<processes).map { _ in try ChildProcess.timedRun(binDir + "/lsopen", ["--help"], environment: environment) }
        let lsopenSamples = try (0..<processes).map { i in try ChildProcess.timedRun(binDir + "/lsopen", ["xyz:process/\(i)"], environment: environment) }
        let canOpenSamples = try (0..<processes).map { _ in try ChildProcess.timedRun(binDir + "/lsopen", ["--can-open", "xyz:can-open"], environment: environment) }
        var lsopenColdSamples: [UInt64] = []
        for i in 0..<cold {
            try terminateApp(client: client)
            lsopenColdSamples.append(try ChildProcess.timedRun(binDir + "/lsopen", ["xyz:process-cold/\(i)"], environment: environment))
        }
        let helpRow = report.row("lsopen --help, whole process (baseline)", helpSamples)
        report.row("lsopen URL, whole process, app warm", lsopenSamples, baseline: helpRow)
        report.row("lsopen URL, whole process, app not running", lsopenColdSamples, baseline: helpRow)
        report.row("lsopen --can-open URL, whole process", canOpenSamples, baseline: helpRow)

        report.gap()
        report.add(idle)
        try memoryAfterOpens(report, client: client, daemon: daemon.pid, idle: idle)

        report.gap()
        let throughput = try throughputRows(report, socket: socket, work: work.path, appLog: work.path + "/state/logs/bench.xyz.log")

        try peerRows(report, work: work.path, warm: warmSamples, lsopen: lsopenSamples, throughput: throughput,
                     cold: ColdFigures(cold: coldSamples, lsopenCold: lsopenColdSamples, canOpen: canOpenSamples),
                     ours: OurDaemon(socket: socket, work: work.path, appLog: work.path + "/state/logs/bench.xyz.log"))
        try sessionBusRows(report, work: work.path, warm: warmSamples)

        try registryScale(report, work: work.path, idle: idle)
        try desktopStartRows(report, work: work.path, idle: idle)
        try report.finish()
    }

    /// The xyz and wordrev bundles, with the built executables.
    func assemble(into folder: String) throws {
        for name in ["xyz", "wordrev"] {
            try BundleFiles.write(bundle: folder + "/\(name).app", infoPlist: BundleFiles.infoPlist(id: "bench.\(name)", executable: name, schemes: [name]),
                                  executable: binDir + "/" + name)
        }
    }

    /// A daemon on `socket`, logging warnings only, once it answers (at most 30 s).
    func startDaemon(socket: String, apps: String, state: String, log: String, poll: UInt32, extra: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(executable: binDir + "/launchservicesd", socket: socket, arguments: ["--apps", apps, "--state", state, "--log-level", "warning"] + extra,
                          log: log, timeout: 30, poll: poll)
    }

    /// Microseconds the cold rows wait after each cold open: longer than the daemon's
    /// settling after a launch (`ProcessSupervisor.settling`, 10 ms), so its deferred work
    /// never falls inside the next sample.
    static let afterLaunch: UInt32 = 20_000

    /// Cold open vs. starting the same app executable (it exits at once outside the daemon),
    /// and the static floor; a note gives each launch phase's median as the daemon timed it,
    /// and another the CPU each thread of the daemon and of the app used inside the opens.
    ///
    /// The three kinds of sample alternate one by one (floor, the app's start, the cold
    /// open), and each starts from the same state: no xyz running (the daemon has seen the
    /// last one go and has done what it defers after a launch) and `coldPause` µs of nothing
    /// just before it. Taken as three runs one
    /// after the other, the app's starts ran back to back on a CPU still busy from the one
    /// before, while every cold open came after killing the app and polling `running`, with
    /// millisecond sleeps, until the daemon had seen it go: a virtual CPU left idle that long
    /// halts and is slower to wake, so the ratio compared unlike states, and the VM's drift
    /// between the two runs fell on one side only (PERFORMANCE.md).
    func coldOpenRows(_ report: Report, client: LaunchServicesClient, work: String, daemon: pid_t) throws -> [UInt64] {
        let floor = peerBinDir.map({ $0 + "/static_true" }).flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
        var floorSamples: [UInt64] = [], spawnSamples: [UInt64] = [], coldSamples: [UInt64] = []
        var phases: [LaunchPhase: [UInt64]] = [:]
        var totals: [UInt64] = []
        var daemonCPU: [ThreadCPU] = [], appCPU: [ThreadCPU] = []
        try terminateApp(client: client)
        for i in 0..<cold {
            // The same idle before every sample, so each starts from a CPU in the same state
            // (a pause in the bench's own process; nothing waits on it).
            if let floor {
                usleep(coldPause)
                floorSamples.append(try ChildProcess.timedRun(floor, []))
            }
            usleep(coldPause)
            spawnSamples.append(try ChildProcess.timedRun(work + "/apps/xyz.app/xyz", [], expecting: nil))
            usleep(coldPause)
            let before = ThreadCPU.read(daemon)
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome = try client.open("xyz:cold/\(i)")
            coldSamples.append(DispatchTime.now().uptimeNanoseconds - start)
            daemonCPU.append(ThreadCPU.read(daemon).since(before))
            // The app was started by this open: all it used so far is this open's.
            if let pid = try runningPID(client: client) { appCPU.append(ThreadCPU.read(pid)) }
            guard outcome.opened, outcome.launched else { throw ValidationError("cold open did not launch: \(outcome.error?.message ?? "warm")") }
            for timing in outcome.timings { phases[timing.phase, default: []].append(timing.nanoseconds) }
            totals.append(outcome.totalNanoseconds ?? 0)
            try terminateApp(client: client)
            // What the daemon does 10 ms after a launch (the next launch's connection, the
            // app's output first heard) is done before the next sample's pause begins (a
            // pause in the bench's own process, between samples; nothing waits on it).
            usleep(Self.afterLaunch)
        }
        var floorRow: Row?
        if floor != nil {
            floorRow = report.row("static C program that returns 0, posix_spawn + wait (floor)", floorSamples)
        } else {
            report.note("static floor row: skipped (no static_true in --peer-bin-dir; scripts/bench builds it with cc -static)")
        }
        let spawnRow = report.row("start and exit of the app executable (baseline)", spawnSamples, baseline: floorRow)
        report.row("cold open: spawn, check-in, 2 launch methods, open", coldSamples, baseline: spawnRow)
        report.note("cold rows: floor, app start and cold open alternate, each after \(coldPause) µs of nothing, with no xyz running")
        let medians = LaunchPhase.allCases.compactMap { phase -> String? in
            guard let samples = phases[phase]?.sorted(), !samples.isEmpty else { return nil }
            return "\(phase.rawValue) \(samples[samples.count / 2] / 1000) µs"
        }
        let total = totals.sorted()[totals.count / 2] / 1000
        report.note("cold open phases as the daemon timed them (medians): " + medians.joined(separator: ", ") + "; the open in the daemon, read to answer: \(total) µs")
        report.note("cold open, CPU by thread inside each open (medians of /proc schedstat): "
                    + (ThreadCPU.medians(appCPU, prefix: "app ") + ThreadCPU.medians(daemonCPU, prefix: "daemon ")).joined(separator: ", "))
        return coldSamples
    }

    /// What `running` says.
    func running(client: LaunchServicesClient) throws -> [RunningReport] {
        try JSONDecoder().decode([RunningReport].self, from: Data(try client.query(.running).utf8))
    }

    /// The running xyz's pid, from `running`.
    func runningPID(client: LaunchServicesClient) throws -> pid_t? {
        try running(client: client).first { $0.id == "bench.xyz" }?.pid
    }

    /// Kills the running xyz (found through `running`) and waits until the daemon has seen it go.
    func terminateApp(client: LaunchServicesClient) throws {
        guard let pid = try runningPID(client: client) else { return }
        kill(pid, SIGKILL)
        for _ in 0..<500 {
            if !(try running(client: client).contains { $0.pid == pid }) { return }
            usleep(1_000)
        }
        throw ValidationError("the daemon did not notice the app's exit")
    }
}

/// The round-trip baseline: a child echoing 16-byte messages on a socketpair.
enum Echo {
    /// `cpus`: the echo child is pinned to the second and this thread to the first for the
    /// samples (the thread's own mask is restored after).
    static func measure(binary: String, count: Int, cpus: (Int32, Int32)? = nil) throws -> [UInt64] {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw ValidationError("socketpair failed") }
        var pid: pid_t = 0
        let argv = [strdup(binary), strdup("--bin-dir"), strdup("."), strdup("--echo-child"), nil]
        defer { argv.forEach { free($0) } }
        let rc = ls_spawn_app(&pid, binary, argv, environ, fds[1])
        close(fds[1])
        guard rc == 0 else { throw ValidationError("cannot start the echo child") }
        defer {
            close(fds[0])
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        var ownMask = [UInt8](repeating: 0, count: Int(LS_CPU_MASK_BYTES))
        if let cpus {
            guard ls_affinity_get(0, &ownMask) == 0, ls_affinity_pin(pid, cpus.1) == 0, ls_affinity_pin(0, cpus.0) == 0 else {
                throw ValidationError("cannot pin the echo pair to CPUs \(cpus.0) and \(cpus.1): \(String(cString: strerror(errno)))")
            }
        }
        defer { if cpus != nil { _ = ls_affinity_set(0, ownMask) } }
        var buffer = [UInt8](repeating: 7, count: 16)
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for _ in 0..<(count + 100) {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = write(fds[0], buffer, 16)
            var got = 0
            while got < 16 { let n = read(fds[0], &buffer[got], 16 - got); if n <= 0 { break }; got += n }
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return Array(samples.dropFirst(100))
    }

    static func serve() -> Never {
        var buffer = [UInt8](repeating: 0, count: 16)
        while true {
            let n = read(3, &buffer, 16)
            if n <= 0 { exit(0) }
            _ = write(3, buffer, n)
        }
    }
}
