import ArgumentParser
import CLaunchServicesShim
import Foundation
import LaunchServicesTesting

/// The D-Bus peers: the same kinds of work as the warm open and the whole `lsopen` process,
/// done the way a desktop does them today, on a private bus started for the bench and
/// stopped by PID afterwards. The echo service and its client are small libdbus programs in
/// `scripts/bench-peers/`, compiled by `scripts/bench` (they stay out of `swift build`, so
/// building and testing the project never needs libdbus headers).
struct DBusPeers {
    /// Folder with the compiled `dbus_echo_service` and `dbus_echo_client`.
    let peerBinDir: String
    let work: String

    /// One echo service reachable through one bus; both stopped by `stop()`.
    struct Bus {
        let name: String
        let address: String
        let environment: [String: String]
        let daemon: ChildProcess
        let service: ChildProcess

        /// Service first (it exits on SIGTERM), then the bus.
        func stop() {
            service.stop()
            daemon.stop()
        }
    }

    /// Why a bus could not be measured; printed as a skipped row.
    struct Unavailable: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The bus configuration: a session-type bus on a socket in the bench's folder, open to
    /// every local caller like a desktop's session bus, and with no service directory but
    /// `servicedir` (in the bench's folder, for the activation peer), so neither bus reads
    /// the user's own `~/.local/share/dbus-1`.
    func writeConfig(_ path: String, listen: String?, servicedir: String? = nil) throws {
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          \(listen.map { "<listen>\($0)</listen>" } ?? "")
          \(servicedir.map { "<servicedir>\($0)</servicedir>" } ?? "")
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*"/>
            <allow receive_sender="*"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
        try config.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The environment every peer process gets: the private bus, and private XDG folders, so
    /// nothing can reach the user's session bus or files.
    func privateEnvironment(bus socket: String) throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("DBUS_") || key.hasPrefix("XDG_") { environment[key] = nil }
        for folder in ["runtime", "config", "data", "cache", "state"] {
            let path = work + "/xdg-" + folder
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment["XDG_\(folder.uppercased())_\(folder == "runtime" ? "DIR" : "HOME")"] = path
        }
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + socket
        return environment
    }

    /// dbus-daemon, as a desktop's session bus runs it (`--nofork`, our own configuration),
    /// with `org.lsbench.Echo.service` in its service directory: once the running echo
    /// service is stopped, a call to the name makes the bus start `dbus_echo_service` itself.
    func startDBusDaemon(_ executable: String) throws -> Bus {
        let folder = work + "/dbus-daemon"
        let services = folder + "/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        try "[D-BUS Service]\nName=org.lsbench.Echo\nExec=\(peerBinDir)/dbus_echo_service\n"
            .write(toFile: services + "/org.lsbench.Echo.service", atomically: true, encoding: .utf8)
        let socket = folder + "/bus"
        try writeConfig(folder + "/bus.conf", listen: "unix:path=" + socket, servicedir: services)
        let environment = try privateEnvironment(bus: socket)
        let daemon = try ChildProcess(executable, ["--config-file=" + folder + "/bus.conf", "--nofork", "--nopidfile", "--nosyslog"], environment: environment, stdout: folder + "/bus.log")
        return try startService(name: "dbus-daemon", folder: folder, socket: socket, environment: environment, daemon: daemon)
    }

    /// dbus-broker through its launcher, handed a listening socket by `systemd-socket-activate`
    /// the way systemd's `dbus.socket` hands it one (which passes on only the variables named
    /// with -E). The launcher logs only to the systemd journal and exits without one; with
    /// `privateJournal` it runs under `private_journal`, which gives it a journal socket in a
    /// private mount namespace. If it still cannot run, that is the reason the peer is skipped.
    func startDBusBroker(launcher: String, socketActivate: String, privateJournal: Bool) throws -> Bus {
        let folder = work + "/dbus-broker"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let socket = folder + "/bus"
        try writeConfig(folder + "/bus.conf", listen: nil)
        let environment = try privateEnvironment(bus: socket)
        let passed = environment.keys.filter { $0.hasPrefix("XDG_") || $0.hasPrefix("DBUS_") }.sorted().flatMap { ["-E", $0] }
        var command = [socketActivate] + passed + ["-l", socket, launcher, "--scope", "user", "--config-file", folder + "/bus.conf"]
        if privateJournal { command.insert(peerBinDir + "/private_journal", at: 0) }
        let daemon = try ChildProcess(command[0], Array(command.dropFirst()), environment: environment, stdout: folder + "/bus.log")
        return try startService(name: "dbus-broker", folder: folder, socket: socket, environment: environment, daemon: daemon)
    }

    /// Waits for the bus socket, starts the echo service and waits for its "ready"; if either
    /// process exits first, stops the other and throws `Unavailable` with the last log line.
    func startService(name: String, folder: String, socket: String, environment: [String: String], daemon: ChildProcess) throws -> Bus {
        func giveUp(_ why: String, _ also: ChildProcess? = nil) -> Unavailable {
            also?.stop()
            daemon.stop()
            let log = (try? String(contentsOfFile: folder + "/bus.log", encoding: .utf8)) ?? ""
            let last = log.split(separator: "\n").last(where: { $0.contains("ERROR") || $0.contains("rror") }) ?? log.split(separator: "\n").last ?? ""
            return Unavailable(reason: why + (last.isEmpty ? "" : " (bus log: \(last.trimmingCharacters(in: .whitespaces)))"))
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while !FileManager.default.fileExists(atPath: socket) {
            if daemon.isRunning == false || DispatchTime.now().uptimeNanoseconds > deadline { throw giveUp("\(name) did not create its socket") }
            usleep(2_000)
        }
        let serviceLog = folder + "/service.log"
        let service = try ChildProcess(peerBinDir + "/dbus_echo_service", [], environment: environment, stdout: serviceLog)
        while ((try? String(contentsOfFile: serviceLog, encoding: .utf8)) ?? "").contains("ready") == false {
            if service.isRunning == false || daemon.isRunning == false || DispatchTime.now().uptimeNanoseconds > deadline {
                throw giveUp("the echo service could not own its name on \(name)", service)
            }
            usleep(2_000)
        }
        return Bus(name: name, address: "unix:path=" + socket, environment: environment, daemon: daemon, service: service)
    }

    /// `count` method calls from one libdbus client process, each timed inside that process.
    func calls(on bus: Bus, count: Int) throws -> [UInt64] {
        let output = work + "/\(bus.name)-calls.txt"
        let client = try ChildProcess(peerBinDir + "/dbus_echo_client", [String(count), "100"], environment: bus.environment, stdout: output)
        guard client.wait() == 0 else { throw ValidationError("dbus_echo_client failed on \(bus.name): \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")") }
        let samples = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { UInt64($0) }
        guard samples.count == count else { throw ValidationError("dbus_echo_client printed \(samples.count) samples, not \(count)") }
        return samples
    }

    /// `count` D-Bus activations: with the running echo service stopped (by its PID, reaped),
    /// `dbus_echo_client`'s activate mode times each call to the name while no one owns it,
    /// so the bus starts the service from its .service file; the client then stops that
    /// service by the PID the bus names and waits until the name is gone (see its header).
    /// dbus-daemon lets go of each service once it owns the name, so this process is a child
    /// subreaper meanwhile and reaps each service by the PID the client printed.
    func activations(on bus: Bus, count: Int) throws -> [UInt64] {
        bus.service.stop()
        guard ls_set_subreaper(1) == 0 else { throw Unavailable(reason: "cannot become a child subreaper to reap the activated services") }
        defer { _ = ls_set_subreaper(0) }
        let output = work + "/\(bus.name)-activations.txt"
        let client = try ChildProcess(peerBinDir + "/dbus_echo_client", [String(count), "0", "activate"], environment: bus.environment, stdout: output)
        let status = client.wait()
        let lines = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ").compactMap { UInt64($0) } }
        let samples = lines.filter { $0.count == 2 }.map { $0[0] }
        for pid in lines.filter({ $0.count == 2 }).map({ pid_t($0[1]) }) {
            var raw: Int32 = 0
            // ECHILD: not reparented here (the bus reaped it itself); it is gone either way.
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
        }
        guard status == 0, samples.count == count else {
            throw Unavailable(reason: "dbus_echo_client activate failed on \(bus.name): \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
        }
        return samples
    }

    /// `dbus-send --print-reply` to the running service, timed from spawn to reaped exit, after
    /// one checked run (its reply must carry the string back).
    func sends(dbusSend: String, on bus: Bus, count: Int) throws -> [UInt64] {
        let arguments = ["--session", "--print-reply", "--dest=org.lsbench.Echo", "/org/lsbench/Echo", "org.lsbench.Echo.Echo", "string:0123456789abcdef"]
        let output = work + "/\(bus.name)-send.txt"
        let status = try ChildProcess(dbusSend, arguments, environment: bus.environment, stdout: output).wait()
        let reply = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0, reply.contains("string \"0123456789abcdef\"") else {
            throw ValidationError("dbus-send did not get the echo back: \(reply)")
        }
        return try (0..<count).map { _ in try ChildProcess.timedRun(dbusSend, arguments, environment: bus.environment) }
    }
}
