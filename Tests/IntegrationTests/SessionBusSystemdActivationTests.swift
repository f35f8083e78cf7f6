import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The bus starting the daemon through systemd, as on a desktop with `dbus-user-session`:
/// a private `systemd --user` manager runs the session bus itself (`dbus.socket` and a
/// `dbus.service` of the test's: `dbus-daemon --systemd-activation` with its own
/// configuration, whose service folder is where `scripts/install-user-service` puts the
/// shipped service file). The manager joins a bus only when that bus is its own
/// `dbus.service`, so a `dbus-daemon` started beside it would never see the manager and an
/// activation through `SystemdService=` would time out. Everything is stopped with the
/// manager, by its PID.
@Suite("Session bus activation through systemd", .serialized)
struct SessionBusSystemdActivationTests {
    static let name = LaunchServicesBus.name
    static let path = LaunchServicesBus.objectPath

    /// The test's session bus as a unit of the manager: `dbus.socket` (shipped with
    /// `dbus-user-session`) listens on `RUNTIME/bus`; this `dbus.service`, in the user's own
    /// unit folder, takes precedence over the machine's (here dbus-broker's).
    static func installBus(in m: UserManager) throws -> String {
        let configuration = m.home + "/session-bus.conf"
        let services = m.home + "/.local/share/dbus-1/services"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(m.runtime)/bus-unused</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(services)</servicedir>
              <limit name="service_start_timeout">60000</limit>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let units = m.home + "/.config/systemd/user"
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        // --address=systemd: takes the socket dbus.socket listens on (it replaces <listen>).
        try """
            [Unit]
            Description=The test's session bus (dbus-daemon, systemd activation)
            Requires=dbus.socket

            [Service]
            Type=notify
            NotifyAccess=main
            ExecStart=/usr/bin/dbus-daemon --config-file=\(configuration) --address=systemd: --nofork --nopidfile --systemd-activation

            """.write(toFile: units + "/dbus.service", atomically: true, encoding: .utf8)
        return configuration
    }

    /// The bus implementations a desktop runs as the user manager's `dbus.service`.
    enum Broker: String {
        /// `dbus-daemon --systemd-activation` with the test's configuration.
        case dbusDaemon = "dbus-daemon"
        /// The machine's own `dbus.service` here (Debian's `dbus-broker` alias): its launcher
        /// reads the session configuration, whose service folders include
        /// `$XDG_DATA_HOME/dbus-1/services`, and always activates through systemd.
        case dbusBroker = "dbus-broker"
    }

    @Test("not running, dbus-daemon: gdbus CanOpen and busctl Open make the bus ask systemd for launchservicesd.service; the name's owner is the unit's MainPID")
    func dbusDaemonStartsUnit() throws {
        try busStartsUnit(.dbusDaemon)
    }

    /// Whether the machine's user `dbus.service` is dbus-broker's launcher (Debian's
    /// `dbus-broker` package enables it as that alias in /etc; `dbus-user-session` ships
    /// dbus-daemon's in /usr/lib). `scripts/bench` installs dbus-broker for its rows;
    /// `scripts/test` does not, since it would change the user's session bus.
    static var machineUserBusIsDBusBroker: Bool {
        for unit in ["/etc/systemd/user/dbus.service", "/usr/lib/systemd/user/dbus.service"] where FileManager.default.fileExists(atPath: unit) {
            return ((try? String(contentsOfFile: unit, encoding: .utf8)) ?? "").contains("dbus-broker-launch")
        }
        return false
    }

    /// dbus-broker's launcher logs only to the journal and exits without one: its manager
    /// gets a journald of its own, which needs a mount namespace (root).
    @Test("not running, dbus-broker: the same through the machine's own user bus",
          .enabled(if: getuid() == 0, "a private journald needs root (unshare --mount)"),
          .enabled(if: machineUserBusIsDBusBroker, "the machine's user dbus.service is not dbus-broker (apt-get install dbus-broker makes it so)"))
    func dbusBrokerStartsUnit() throws {
        try busStartsUnit(.dbusBroker)
    }

    func busStartsUnit(_ broker: Broker) throws {
        let m = try UserManager(privateJournal: broker == .dbusBroker)
        defer { m.stop() }
        let configuration: String
        switch broker {
        case .dbusDaemon:
            configuration = try Self.installBus(in: m)
        case .dbusBroker:
            let machines = try m.run("/usr/bin/systemctl", ["--user", "cat", "dbus.service"], timeout: 30)
            try #require(machines.stdout.contains("dbus-broker-launch"), "this machine's user dbus.service is not dbus-broker: \(machines.stdout)")
            configuration = "dbus-broker-launch"
            // Its launcher finds the user's home through the user database, not HOME: the
            // test's data folder is named to the units (as a session's environment would).
            #expect(try m.systemctl("set-environment", "XDG_DATA_HOME=" + m.home + "/.local/share").status == 0)
        }
        // --no-start: the socket is enabled, not listening; only the bus starts the daemon.
        let install = try m.run(m.repo + "/scripts/install-user-service", ["--bin-dir", DaemonHarness.binDirectory, "--no-start"])
        #expect(install.status == 0, "installer: \(install.stdout) \(install.stderr)")
        let serviceFile = m.home + "/.local/share/dbus-1/services/\(Self.name).service"
        let installed = (try? String(contentsOfFile: serviceFile, encoding: .utf8)) ?? ""
        #expect(installed.contains("\nSystemdService=launchservicesd.service\n") && installed.contains("\nExec=\(m.home)/.local/bin/launchservicesd\n"),
                "\(installed)")
        // The Exec= route would run the daemon outside the unit: make it fail loudly instead,
        // so only SystemdService= can answer.
        try installed.replacingOccurrences(of: "Exec=\(m.home)/.local/bin/launchservicesd", with: "Exec=/bin/false")
            .write(toFile: serviceFile, atomically: true, encoding: .utf8)
        #expect(try String(contentsOfFile: serviceFile, encoding: .utf8).contains("\nExec=/bin/false\n"))
        #expect(try m.systemctl("daemon-reload").status == 0)

        #expect(try m.systemctl("is-active", "dbus.socket").stdout.trimmed == "active", "dbus-user-session's socket listens on RUNTIME/bus")
        #expect(try m.systemctl("is-active", "launchservicesd.service").stdout.trimmed != "active")
        #expect(try m.systemctl("is-active", "launchservicesd.socket").stdout.trimmed != "active")
        #expect(try m.mainPID() == 0)

        // The bus (started by its socket on this first connection) is the test's dbus-daemon,
        // and it knows the name only from the installed file.
        let activatable = try m.run("/usr/bin/busctl", ["--user", "--activatable", "list", "--no-legend"], timeout: 60)
        #expect(activatable.stdout.split(separator: "\n").contains { $0.hasPrefix(Self.name + " ") }, "\(activatable.stdout) \(activatable.stderr)")
        let busPID = Int32(try m.systemctl("show", "-p", "MainPID", "--value", "dbus.service").stdout.trimmed) ?? 0
        let busCommand = (try? String(contentsOfFile: "/proc/\(busPID)/cmdline", encoding: .utf8)) ?? ""
        #expect(busCommand.contains(broker == .dbusDaemon ? "dbus-daemon" : "dbus-broker") && busCommand.contains(configuration), "dbus.service runs \(busCommand)")
        #expect(try m.mainPID() == 0, "listing the bus does not start the daemon")

        // A client nobody here wrote calls the name: the bus hands the start to systemd.
        let canOpen = try m.run("/usr/bin/gdbus", ["call", "--session", "--dest", Self.name, "--object-path", Self.path,
                                                   "--method", LaunchServicesBus.interface + ".CanOpen", "todolist://x"], timeout: 90)
        let status = try m.systemctl("status", "--no-pager", "launchservicesd.service", "dbus.service")
        #expect(canOpen.status == 0, "\(canOpen.stdout) \(canOpen.stderr)\n\(status.stdout)")
        #expect(canOpen.stdout.trimmed == "(true,)", "\(canOpen.stdout)")
        #expect(try m.systemctl("is-active", "launchservicesd.service").stdout.trimmed == "active", "\(status.stdout)")
        let unitPID = try m.mainPID()
        #expect(unitPID > 0)

        // Who answers on the bus is the unit's main process, the installed daemon.
        let owner = try m.run("/usr/bin/busctl", ["--user", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                  "GetConnectionUnixProcessID", "s", Self.name], timeout: 30)
        #expect(owner.stdout.trimmed == "u \(unitPID)", "\(owner.stdout) \(owner.stderr)")
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(unitPID)/exe")
        #expect(exe == m.home + "/.local/bin/launchservicesd", "\(exe)")

        // busctl Open: the full answer, from the same process; the unit's socket serves lsopen too.
        let open = try m.run("/usr/bin/busctl", ["--user", "--json=short", "call", Self.name, Self.path, LaunchServicesBus.interface, "Open",
                                                 "sa{sv}", "todolist://www.acme.com?systemd", "0"], timeout: 60)
        #expect(open.status == 0, "\(open.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(open.stdout.utf8)) as? [String: Any], "\(open.stdout)")
        let fields = try #require((reply["data"] as? [Any])?.first as? [String: Any], "\(reply)")
        #expect((fields["app"] as? [String: Any])?["data"] as? String == "com.acme.todolist", "\(fields)")
        #expect((fields["opened"] as? [String: Any])?["data"] as? Bool == true, "\(fields)")
        #expect(try m.systemctl("is-active", "launchservicesd.socket").stdout.trimmed == "active", "the unit requires its socket")
        let lsopen = try m.run(m.home + "/.local/bin/lsopen", ["xyz:over-the-socket"])
        #expect(lsopen.status == 0, "\(lsopen.stdout) \(lsopen.stderr)")
        #expect(try m.mainPID() == unitPID, "one daemon serves both")

        // Stopping the manager stops the bus, the daemon and the app the open started.
        m.stop()
        #expect(!isAlive(unitPID), "the daemon outlived its manager")
        #expect(!isAlive(busPID), "the bus outlived its manager")
    }
}
