#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesApp
import LaunchServicesClient

/// The configurable test app: what it does in each phase is set by its arguments, or by a
/// `test-behavior` file in its bundle (one argument per line), since the daemon starts
/// executables without arguments.
///
///   --launch=crash|hang|exit        before checking in
///   --will-finish=yes|no|crash|hang|exit
///   --did-finish=yes|no|crash|hang|exit
///   --open=yes|no|crash|hang|exit
///   --delegate=modern|legacy|both|neither   which URL methods it implements
///   --log=FILE                      append one line per event (for tests to read)
///   --open-url=URL                  in didBecomeActive, open this URL once (app-to-app)
///   --can-open-url=URL              in didFinishLaunching, record canOpenURL(URL)
///   --unregister=ID                 in didFinishLaunching, try `lsctl unregister ID` over
///                                   the daemon's socket, and record the answer
///   --claim-default=SCHEME          in didFinishLaunching, try `lsctl default SCHEME <self>`
///                                   over the daemon's socket, and record the answer
///   --child-run=COMMAND             in didFinishLaunching, run COMMAND through /bin/sh (a
///                                   process the app starts) and record its exit status
///   --bus-run=COMMAND               in didFinishLaunching, connect to the session bus itself
///                                   (DBUS_SESSION_BUS_ADDRESS, unix:path= only), then run
///                                   COMMAND through /bin/sh with that socket's descriptor in
///                                   LSTESTAPP_BUS_FD, and record `busRun pid=PID -> STATUS`.
///                                   The bus reads a connection's credentials from the socket
///                                   (SO_PEERCRED, fixed by connect(2)), so a D-Bus client
///                                   speaking on it is, to the bus, this app's own process:
///                                   the app calls over D-Bus without a D-Bus library in it
///   --open-delay=MS                 in every open, take MS milliseconds before answering
///   --terminate=exit|stay|stay-ignoring-term   in willTerminate: return and exit (default),
///                                   stay alive, or stay alive and ignore SIGTERM too
///   --print=TEXT                    at launch, write `TEXT stdout N` to stdout and
///                                   `TEXT stderr N` to stderr (N from 1; app-log tests)
///   --print-repeat=N                write those two lines N times (default 1)
///   --open=hang-first               hang in the first open of all copies of this app (a
///                                   marker file beside the log), answer YES afterwards
///   --clock=monotonic               begin each log line with CLOCK_MONOTONIC nanoseconds,
///                                   read as the event happens (the bench's end point: when
///                                   a URL reached the app)
struct Behavior {
    var launch = "yes"
    var willFinish = "yes"
    var didFinish = "yes"
    var open = "yes"
    var delegate = "modern"
    var log: String?
    var openURL: String?
    var canOpenURL: String?
    var claimDefault: String?
    var unregister: String?
    var childRun: String?
    var busRun: String?
    var openDelay: UInt32 = 0
    var terminate = "exit"
    var print: String?
    var printRepeat = 1
    var clock = false

    init(arguments: [String]) {
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "--launch": launch = parts[1]
            case "--will-finish": willFinish = parts[1]
            case "--did-finish": didFinish = parts[1]
            case "--open": open = parts[1]
            case "--delegate": delegate = parts[1]
            case "--log": log = parts[1]
            case "--open-url": openURL = parts[1]
            case "--can-open-url": canOpenURL = parts[1]
            case "--claim-default": claimDefault = parts[1]
            case "--unregister": unregister = parts[1]
            case "--child-run": childRun = parts[1]
            case "--bus-run": busRun = parts[1]
            case "--open-delay": openDelay = UInt32(parts[1]) ?? 0
            case "--terminate": terminate = parts[1]
            case "--print": print = parts[1]
            case "--print-repeat": printRepeat = Int(parts[1]) ?? 1
            case "--clock" where parts[1] == "monotonic": clock = true
            default: StandardStreams.error("lstestapp: unknown argument \(argument)\n")
            }
        }
    }

    /// Acts out `what`; returns the YES/NO answer when the app survives.
    func act(_ what: String, phase: String) -> Bool {
        record("\(phase) -> \(what)")
        switch what {
        case "no": return false
        case "crash":
            signal(SIGSEGV, SIG_DFL)
            raise(SIGSEGV)
            return false
        case "hang":
            while true { sleep(1000) }
        case "hang-first":
            // The marker makes later copies (after the daemon ended the hung one) answer.
            let marker = (log ?? "/tmp/lstestapp") + ".hung-\(getenv("LAUNCHSERVICES_BUNDLE_ID").map { String(cString: $0) } ?? "app")"
            let fd = Glibc.open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return true }
            Glibc.close(fd)
            while true { sleep(1000) }
        case "exit":
            exit(3)
        default: return true
        }
    }

    func record(_ line: String) {
        guard let log else { return }
        var time = timespec()
        if clock { clock_gettime(CLOCK_MONOTONIC, &time) }
        let fd = Glibc.open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let text = (clock ? "\(Int(time.tv_sec) * 1_000_000_000 + time.tv_nsec) " : "") + "\(getpid()) \(line)\n"
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        Glibc.close(fd)
    }
}

/// Reads the bundle's `test-behavior` file, if any, without Foundation.
func bundleArguments() -> [String] {
    guard let bundle = getenv("LAUNCHSERVICES_BUNDLE_PATH"), let file = fopen(String(cString: bundle) + "/test-behavior", "r") else { return [] }
    defer { fclose(file) }
    var lines: [String] = []
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, Int32(buffer.count), file) != nil {
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        let line = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        if !line.isEmpty { lines.append(line) }
    }
    return lines
}

/// A stream socket connected, by this process, to the session bus's `unix:path=` address;
/// not close-on-exec, so the command `--bus-run` starts inherits it.
func connectToSessionBus() -> Int32? {
    guard let variable = getenv("DBUS_SESSION_BUS_ADDRESS") else { return nil }
    let address = String(cString: variable)
    guard address.hasPrefix("unix:path=") else { return nil }
    let path = Array((address.dropFirst("unix:path=".count).split(separator: ",", maxSplits: 1).first ?? "").utf8)
    var socketAddress = sockaddr_un()
    socketAddress.sun_family = sa_family_t(AF_UNIX)
    guard path.count < MemoryLayout.size(ofValue: socketAddress.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &socketAddress.sun_path) { bytes in
        for (index, byte) in path.enumerated() { bytes[index] = byte }
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    let connected = withUnsafePointer(to: &socketAddress) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
        Glibc.close(fd)
        return nil
    }
    return fd
}

let behavior = Behavior(arguments: bundleArguments() + Array(CommandLine.arguments.dropFirst()))

/// Shared behaviour of every delegate variant.
@MainActor
class TestDelegate {
    var openedOnce = false
    func launchMethod(_ phase: String, _ what: String, _ options: LaunchOptions) -> Bool {
        behavior.record("\(phase) url=\(options.urlString) source=\(options.sourceApplication) annotation=\(options.annotation?.description ?? "nil")")
        return behavior.act(what, phase: phase)
    }
    func deliver(_ method: String, _ url: ParsedURL, _ source: String?, warning: String? = nil, background: Bool = false) -> Bool {
        if behavior.openDelay > 0 { usleep(behavior.openDelay * 1000) }
        behavior.record("\(method) url=\(url) source=\(source ?? "nil") host=\(url.host ?? "nil") query=\(url.query ?? "nil") fragment=\(url.fragment ?? "nil")" + (warning.map { " warning=\($0)" } ?? "") + (background ? " background" : ""))
        return behavior.act(behavior.open, phase: method)
    }
    func notified(_ name: String, _ application: Application) {
        behavior.record(name)
        if name == "didBecomeActive", let url = behavior.openURL, !openedOnce {
            openedOnce = true
            application.open(url) { outcome in
                behavior.record("openResult \(url) opened=\(outcome.opened) app=\(outcome.app ?? "nil") error=\(outcome.error?.code.rawValue ?? "nil")")
            }
        }
    }
}

extension ApplicationDelegate where Self: TestDelegate {
    func willFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool { launchMethod("willFinishLaunching", behavior.willFinish, options) }
    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        if let url = behavior.canOpenURL { behavior.record("canOpenURL \(url) -> \(application.canOpenURL(url))") }
        if let id = behavior.unregister {
            do {
                let client = try LaunchServicesClient(program: "lstestapp")
                defer { client.close() }
                _ = try client.command("unregister", [id])
                behavior.record("unregister \(id) -> accepted")
            } catch {
                behavior.record("unregister \(id) -> \(error.code.rawValue)")
            }
        }
        if let scheme = behavior.claimDefault {
            do {
                let client = try LaunchServicesClient(program: "lstestapp")
                defer { client.close() }
                _ = try client.command("default", [scheme, application.bundleIdentifier])
                behavior.record("claimDefault \(scheme) -> accepted")
            } catch {
                behavior.record("claimDefault \(scheme) -> \(error.code.rawValue)")
            }
        }
        if let command = behavior.childRun {
            let status = system(command)
            behavior.record("childRun -> \(status == -1 ? -1 : (status >> 8) & 0xFF)")
        }
        if let command = behavior.busRun {
            if let fd = connectToSessionBus() {
                setenv("LSTESTAPP_BUS_FD", "\(fd)", 1)
                let status = system(command)
                Glibc.close(fd)
                behavior.record("busRun pid=\(getpid()) -> \(status == -1 ? -1 : (status >> 8) & 0xFF)")
            } else {
                behavior.record("busRun pid=\(getpid()) -> no bus (errno \(errno))")
            }
        }
        return launchMethod("didFinishLaunching", behavior.didFinish, options)
    }
    func didBecomeActive(_ application: Application) { notified("didBecomeActive", application) }
    func willResignActive(_ application: Application) { notified("willResignActive", application) }
    func didEnterBackground(_ application: Application) { notified("didEnterBackground", application) }
    func willEnterForeground(_ application: Application) { notified("willEnterForeground", application) }
    func willTerminate(_ application: Application) {
        behavior.record("willTerminate")
        guard behavior.terminate != "exit" else { return }
        if behavior.terminate == "stay-ignoring-term" { signal(SIGTERM, SIG_IGN) }
        while true { sleep(1000) }
    }
}

final class ModernDelegate: TestDelegate, ApplicationDelegate {
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        deliver("open", url, sourceApplication, warning: application.currentDeliveryWarning, background: application.openedInBackground)
    }
}

final class LegacyDelegate: TestDelegate, ApplicationDelegate {
    func handleOpen(_ application: Application, url: ParsedURL) -> Bool { deliver("handleOpen", url, nil) }
}

final class BothDelegate: TestDelegate, ApplicationDelegate {
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        deliver("open", url, sourceApplication)
    }
    func handleOpen(_ application: Application, url: ParsedURL) -> Bool { deliver("handleOpen", url, nil) }
}

final class NeitherDelegate: TestDelegate, ApplicationDelegate {}

behavior.record("started")
if let text = behavior.print {
    // Unbuffered writes, so the lines are out before anything else happens.
    for n in 1...max(1, behavior.printRepeat) {
        for (fd, stream) in [(Int32(1), "stdout"), (Int32(2), "stderr")] {
            let line = "\(text) \(stream) \(n)\n"
            _ = line.withCString { Glibc.write(fd, $0, strlen($0)) }
        }
    }
    behavior.record("printed")
}
_ = behavior.act(behavior.launch, phase: "launch")
switch behavior.delegate {
case "legacy": Application.main(delegate: LegacyDelegate())
case "both": Application.main(delegate: BothDelegate())
case "neither": Application.main(delegate: NeitherDelegate())
default: Application.main(delegate: ModernDelegate())
}
