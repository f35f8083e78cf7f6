import Foundation
import LaunchServicesTesting

/// A bundle executable written to the 0.3 protocol's §5.2 and nothing newer, standing for an
/// app built on the previous runtime: a plain Python program (standard library only). It
/// writes its hello first, then reads strictly one frame at a time (exactly 4 bytes of
/// length, then exactly that many), logs each frame it handles, answers `launchMethod` and
/// `deliver` under their ids, and exits when the connection closes. It checks the order
/// §5.2 promises (welcome, willFinishLaunching, didFinishLaunching, then notifications and
/// deliveries) and logs `order-violation …` otherwise.
///
/// Its `legacy-behavior` file, beside it in the bundle, holds `key=value` lines: `log=PATH`
/// (required), `veto=PHASE` (a launch method answering NO) and `peekBeforeHello=SECONDS`
/// (before its hello, waits up to that long for bytes on fd 3 and logs whether any came:
/// `waiting-before-hello yes|no`; an old app never does this, it only shows what it would
/// find).
///
/// `dropsVetoed=yes` makes it a runtime of 0.4 instead: its hello says it drops the launch's
/// delivery after a NO (tag 5), it logs a `deliver`'s `ofLaunch` mark (tag 7), and it drops
/// (`dropped id=N`, unanswered) one so marked after a veto — unless `runVetoed=yes`, a runtime
/// that claims to and does not. Before answering anything it reads, for up to 2 s, every
/// frame already on fd 3 until a `deliver`, and logs their kinds: `before-answering …`.
enum LegacyRuntimeApp {
    static let source = #"""
    #!/usr/bin/env python3
    import os, select, struct, sys, time

    bundle = os.environ["LAUNCHSERVICES_BUNDLE_PATH"]
    settings = dict(line.split("=", 1) for line in open(bundle + "/legacy-behavior").read().split() if "=" in line)
    log = open(settings["log"], "a", buffering=1)
    fd = int(os.environ["LAUNCHSERVICES_APP_FD"])

    def event(text):
        log.write("%d %s\n" % (os.getpid(), text))

    def field(tag, value):
        return struct.pack(">BI", tag, len(value)) + value

    def send(kind, request_id, fields):
        body = struct.pack(">BI", kind, request_id) + b"".join(fields)
        data = struct.pack(">I", len(body)) + body
        while data:
            data = data[os.write(fd, data):]

    def read_exactly(count):
        data = b""
        while len(data) < count:
            chunk = os.read(fd, count - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def next_frame():
        (length,) = struct.unpack(">I", read_exactly(4))
        body = read_exactly(length)
        kind, request_id = struct.unpack(">BI", body[:5])
        fields, at = {}, 5
        while at < len(body):
            tag, size = struct.unpack(">BI", body[at:at + 5])
            fields[tag] = body[at + 5:at + 5 + size]
            at += 5 + size
        return kind, request_id, fields

    event("started")
    if "peekBeforeHello" in settings:
        ready, _, _ = select.select([fd], [], [], float(settings["peekBeforeHello"]))
        event("waiting-before-hello " + ("yes" if ready else "no"))
    drops = settings.get("dropsVetoed") == "yes"
    hello = [field(1, struct.pack(">Q", 1)), field(2, b"app"), field(3, os.environ["LAUNCHSERVICES_BUNDLE_ID"].encode())]
    send(0x01, 0, hello + ([field(5, b"\x01")] if drops else []))
    expected = ["welcome", "willFinishLaunching", "didFinishLaunching"]
    vetoed = False

    def handle(kind, request_id, fields):
        global vetoed
        if kind == 0x02:
            name = "welcome"
            event("welcome identity=%s" % fields[2].decode())
        elif kind == 0x30:
            name = fields[1].decode()
            event("launchMethod %s id=%d url=%s annotation=%d" % (name, request_id, fields[2].decode(), len(fields.get(4, b""))))
            accepted = settings.get("veto") != name
            vetoed = vetoed or not accepted
            send(0x33, request_id, [field(1, b"\x01" if accepted else b"\x00")])
        elif kind == 0x32:
            name = "notify"
            event("notify %s" % fields[1].decode())
        elif kind == 0x31:
            name = "deliver"
            of_launch = fields.get(7) == b"\x01"
            event("deliver id=%d url=%s" % (request_id, fields[2].decode()) + (" ofLaunch=%d" % of_launch if drops else ""))
            if of_launch and vetoed and settings.get("runVetoed") != "yes":
                event("dropped id=%d" % request_id)
            else:
                send(0x33, request_id, [field(1, b"\x01"), field(2, b"open")])
        else:
            name = "kind-%d" % kind
            event("frame kind=%d id=%d" % (kind, request_id))
        if expected:
            if name != expected[0]:
                event("order-violation expected %s, got %s" % (expected[0], name))
            expected.pop(0)
        elif name not in ("notify", "deliver"):
            event("order-violation %s after the launch methods" % name)

    try:
        waiting = []
        if drops:
            limit = time.monotonic() + 2
            while time.monotonic() < limit and not any(kind == 0x31 for kind, _, _ in waiting):
                ready, _, _ = select.select([fd], [], [], max(0, limit - time.monotonic()))
                if ready:
                    waiting.append(next_frame())
            names = {0x02: "welcome", 0x30: "launchMethod", 0x32: "notify", 0x31: "deliver"}
            event("before-answering " + " ".join(names.get(kind, "kind-%d" % kind) for kind, _, _ in waiting))
        for frame in waiting:
            handle(*frame)
        while True:
            handle(*next_frame())
    except EOFError:
        event("connection-closed")
        sys.exit(0)
    """#

    /// A daemon (launch methods written at spawn or not) with this program registered as
    /// `NAME.app` for `id` and `scheme`, its log the harness's event log.
    static func daemon(name: String, id: String, scheme: String, prewrite: Bool, settings: [String: String]) throws -> DaemonHarness {
        let h = try DaemonHarness(apps: [], config: "{\"prewriteLaunchMethods\": \(prewrite)}")
        do {
            try install(in: h.appsFolder, name: name, id: id, scheme: scheme, settings: settings.merging(["log": h.eventLog]) { $1 })
            let rescan = try h.run("lsctl", ["rescan"])
            guard rescan.status == 0 else { throw HarnessError("lsctl rescan: \(rescan.stdout) \(rescan.stderr)") }
        } catch {
            h.stop()
            throw error
        }
        return h
    }

    /// The app's log lines without their pid, once one starting with `last` has been logged.
    static func events(_ h: DaemonHarness, until last: String) throws -> [String] {
        try h.eventually("the app logs \(last)") { h.eventNames().contains { $0.hasPrefix(last) } }
        return h.eventNames()
    }

    /// Writes a bundle `NAME.app` for `id`, declaring `scheme`, whose executable is this program.
    static func install(in appsFolder: String, name: String, id: String, scheme: String, settings: [String: String]) throws {
        let bundle = appsFolder + "/" + name + ".app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try BundleFiles.infoPlist(id: id, executable: "legacyapp", schemes: [scheme]).write(toFile: bundle + "/Info.plist", atomically: true, encoding: .utf8)
        let executable = bundle + "/legacyapp"
        let text = source.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n") + "\n"
        try text.write(toFile: executable, atomically: true, encoding: .utf8)
        guard chmod(executable, 0o755) == 0 else { throw HarnessError("chmod \(executable) failed") }
        try settings.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "\n").appending("\n")
            .write(toFile: bundle + "/legacy-behavior", atomically: true, encoding: .utf8)
    }
}
