import Foundation
import GRDB
import LaunchServicesTesting
import Testing

/// A state database another process holds with SQLite's locks (an `sqlite3` shell, a
/// program writing it, an older daemon) may be read half-written: the daemon neither judges
/// it nor sets it aside, and names the process instead.
@Suite("State databases in use by another process")
struct DatabaseInUseTests {
    /// The system's Python, whose `sqlite3` module is SQLite's own locking (POSIX advisory
    /// locks on the file), as an `sqlite3` shell's or another program's would be.
    static let python = "/usr/bin/python3"
    static let pythonWorks: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        return (try? ChildProcess.run(python, ["-c", "import sqlite3"], scratch: NSTemporaryDirectory(), timeout: 30).status) == 0
    }()

    /// A process that opens `file`, reads it and holds a write transaction open (as a
    /// program in the middle of writing it would), until it is stopped (at most 120 s).
    final class Holder {
        let process: ChildProcess
        let output: String

        init(_ file: String, scratch: String) throws {
            output = scratch + "/holder-\(UUID().uuidString).out"
            let script = """
                import sqlite3, sys, time
                db = sqlite3.connect(sys.argv[1], isolation_level=None)
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
                db.execute("BEGIN IMMEDIATE")
                print("holding", flush=True)
                time.sleep(120)
                """
            process = try ChildProcess(DatabaseInUseTests.python, ["-c", script, file], stdout: output)
            try waitUntil("the holder has the file open in a write transaction", within: 20) {
                guard process.isRunning else { throw HarnessError("the holder exited: \(text)") }
                return text.contains("holding")
            }
        }

        var text: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

        func stop() {
            process.stop()
            try? FileManager.default.removeItem(atPath: output)
        }
    }

    /// Random bytes over the middle third of `file`, as a write torn in the middle would leave.
    func overwriteMiddle(_ file: String) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 3)
        var random = SystemRandomNumberGenerator()
        try handle.write(contentsOf: Data((0 ..< Int(size / 3)).map { _ in UInt8.random(in: 0 ... 255, using: &random) }))
    }

    @Test("a registry another process holds (healthy, or looking damaged as it is written) stops the start with that process named; nothing is set aside or changed",
          .enabled(if: pythonWorks, "needs /usr/bin/python3 with its sqlite3 module (a process holding SQLite's locks)"),
          arguments: [false, true])
    func registryInUse(damaged: Bool) throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let file = state + "/registry.sqlite"
        #expect(try h.lsctl("register", try h.bundleOutsideAppsFolders("manual")).status == 0)
        kill(h.daemonPID, SIGTERM)
        try h.eventually("the daemon stops") { !isAlive(h.daemonPID) }

        let holder = try Holder(file, scratch: h.root)
        defer { holder.stop() }
        if damaged {
            try overwriteMiddle(file)
            try #require(DamagedDatabaseTests().sqliteFindsDamaged(file, scratch: h.root), "the test damaged the registry beyond what SQLite accepts")
        }
        let before = DatabaseCopy.bytes(file)
        let refused = try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--socket", h.socket, "--apps", h.appsFolder, "--state", state],
                                           scratch: h.root, timeout: 20)
        #expect(refused.status != 0, "\(refused.stderr)")
        #expect(refused.stderr.contains(file) && refused.stderr.contains("in use by process \(holder.process.pid)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("damaged"), "\(refused.stderr)")
        #expect(DatabaseCopy.bytes(file) == before, "the file and its log are as the holder left them")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).allSatisfy { !$0.contains(".damaged-") })
        #expect(holder.process.isRunning)
    }

    @Test("a pasteboard database another process holds is left alone: the daemon serves without persistent pasteboards and names that process in lsctl status",
          .enabled(if: pythonWorks, "needs /usr/bin/python3 with its sqlite3 module (a process holding SQLite's locks)"))
    func pasteboardDatabaseInUse() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let file = h.root + "/state/pasteboard.sqlite"
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "kept text").status == 0)
        var holder: Holder?
        defer { holder?.stop() }
        var before: [String: Data] = [:]
        try h.restart(signal: SIGTERM, within: 5) {
            holder = try Holder(file, scratch: h.root)
            try overwriteMiddle(file)
            try #require(DamagedDatabaseTests().sqliteFindsDamaged(file, scratch: h.root), "the test damaged the file beyond what SQLite accepts")
            before = DatabaseCopy.bytes(file)
        }
        let pid = try #require(holder?.process.pid)
        #expect(try h.lsopen("alpha:served").status == 0)
        let problems = try h.lsctl("status", "--json").json?["storageProblems"] as? [String] ?? []
        #expect(problems.count == 1 && problems.first?.contains("in use by process \(pid)") == true, "\(problems)")
        #expect(try h.lsctl("status", "--json").json?["damagedDatabases"] == nil)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "other", "--persistent", "--text", "x").status != 0, "refused, not written over")
        #expect(DatabaseCopy.bytes(file) == before, "the file and its log are as the holder left them")
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.root + "/state").allSatisfy { !$0.contains(".damaged-") })
    }
}
