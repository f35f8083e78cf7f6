import Foundation
import LaunchServicesTesting

/// The programs desktop entries run in the desktop integration tests, and what they record.
///
/// `itrecord MODE ARGS…` (a handler) writes its pid and its whole argument vector, byte for
/// byte, to `$IT_RECORDS/handler-PID.rec` (written aside and renamed, so a record is read
/// whole or not at all), then does what MODE says:
/// - `sleep`: runs until it is signalled (a handler still running after the grace);
/// - `exit0`: exits 0 at once (a handler that passed the URL to a running instance);
/// - `fail`: writes `failLines` to stderr and exits 3;
/// - `kill`: ends itself with SIGKILL.
///
/// `itterm -e PROGRAM ARGS…` (a terminal emulator, `$TERMINAL`) records the same way
/// (`terminal-PID.rec`), then becomes `PROGRAM ARGS…` (exec, same pid), as `xterm -e` does.
///
/// Both are Debian's `/usr/bin/python3` (installed with python3-dbus by scripts/test): no
/// shell reads their arguments, so an argument that reached a shell shows as the files its
/// `$(…)`, backticks, `;`, `|` or `&` would create.
enum HandlerPrograms {
    static let python = "/usr/bin/python3"
    /// What `itrecord fail` writes to stderr, in order.
    static let failLines = ["itrecord: first line of trouble", "itrecord: second line, \"quoted\" and done"]
    static let failStatus: Int32 = 3

    static let recorder = """
        #!/usr/bin/python3
        import os, signal, sys, time

        def record(kind):
            folder = os.environb[b"IT_RECORDS"]
            pid = os.getpid()
            fields = [b"%d" % pid] + [os.fsencode(a) for a in sys.argv[1:]]
            aside = os.path.join(folder, b".%s-%d.tmp" % (kind, pid))
            with open(aside, "wb") as f:
                f.write(b"".join(field + b"\\0" for field in fields))
            os.rename(aside, os.path.join(folder, b"%s-%d.rec" % (kind, pid)))

        record(b"handler")
        mode = sys.argv[1] if len(sys.argv) > 1 else ""
        if mode == "sleep":
            while True:
                signal.pause()
        elif mode == "exit0":
            sys.exit(0)
        elif mode == "fail":
            sys.stderr.write("\(failLines[0])\\n")
            sys.stderr.write("\(failLines[1].replacingOccurrences(of: "\"", with: "\\\""))\\n")
            sys.stderr.flush()
            sys.exit(\(failStatus))
        elif mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(60)
        sys.stderr.write("itrecord: unknown mode %r\\n" % mode)
        sys.exit(64)

        """

    static let terminal = """
        #!/usr/bin/python3
        import os, sys

        folder = os.environb[b"IT_RECORDS"]
        pid = os.getpid()
        fields = [b"%d" % pid] + [os.fsencode(a) for a in sys.argv[1:]]
        aside = os.path.join(folder, b".terminal-%d.tmp" % pid)
        with open(aside, "wb") as f:
            f.write(b"".join(field + b"\\0" for field in fields))
        os.rename(aside, os.path.join(folder, b"terminal-%d.rec" % pid))
        if len(sys.argv) > 2 and sys.argv[1] == "-e":
            os.execvp(sys.argv[2], sys.argv[2:])
        sys.stderr.write("itterm: give -e PROGRAM ARGS\\n")
        sys.exit(64)

        """

    /// Writes both programs into `bin` (mode 0755).
    static func install(in bin: String) throws {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw HarnessError("\(python) is missing: scripts/test installs it (apt-get install python3-dbus)")
        }
        for (name, text) in [("itrecord", recorder), ("itterm", terminal)] {
            let path = bin + "/" + name
            try writeFile(text, to: path)
            guard chmod(path, 0o755) == 0 else { throw HarnessError("chmod \(path): \(String(cString: strerror(errno)))") }
        }
    }
}

/// One process's record: its pid and its arguments (without the program itself).
struct HandlerRecord: Equatable, CustomStringConvertible {
    enum Kind: String {
        case handler
        case terminal
    }

    var kind: Kind
    var pid: Int32
    /// Exactly the bytes each argument held, as UTF-8 (every test argument is UTF-8).
    var arguments: [String]

    var description: String { "\(kind.rawValue) \(pid) \(arguments)" }

    /// Every record in `folder`, oldest pid first.
    static func all(in folder: String) -> [HandlerRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { name -> HandlerRecord? in
            guard name.hasSuffix(".rec"), let kind = Kind(rawValue: String(name.prefix { $0 != "-" })),
                  let data = FileManager.default.contents(atPath: folder + "/" + name) else { return nil }
            var fields = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            guard fields.last == "" else { return nil }
            fields.removeLast()
            guard let pid = fields.first.flatMap({ Int32($0) }) else { return nil }
            return HandlerRecord(kind: kind, pid: pid, arguments: Array(fields.dropFirst()))
        }.sorted { ($0.pid, $0.kind.rawValue) < ($1.pid, $1.kind.rawValue) }
    }
}
