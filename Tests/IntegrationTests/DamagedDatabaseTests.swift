import Foundation
import GRDB
import LaunchServicesTesting
import Testing

/// A damaged state database is the user's data: the daemon keeps it byte for byte under
/// another name, starts on a new one, says what was lost and where the old one is, and
/// serves opens all the while.
@Suite("Damaged databases")
struct DamagedDatabaseTests {
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        /// Cut to half its length.
        case truncated
        /// Random bytes written over the middle third.
        case corrupted

        var testDescription: String { rawValue }

        /// Damages `file` in place; returns the bytes it then holds.
        func apply(to file: String) throws -> Data {
            var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            switch self {
            case .truncated:
                bytes = bytes.prefix(bytes.count / 2)
            case .corrupted:
                var random = SystemRandomNumberGenerator()
                for index in bytes.count / 3 ..< bytes.count * 2 / 3 { bytes[index] = random.next() }
            }
            try bytes.write(to: URL(fileURLWithPath: file))
            return bytes
        }
    }

    /// Moves everything of a (stopped) database into its main file, as a checkpoint does, so
    /// the damage lands on the data and not on a file that only holds a header.
    func checkpoint(_ file: String) throws {
        let queue = try DatabaseQueue(path: file)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
    }

    /// Whether SQLite itself finds `file` damaged, asked of a copy (with its write-ahead log,
    /// if there is one; so asking changes nothing).
    func sqliteFindsDamaged(_ file: String, scratch: String) -> Bool {
        let copy = scratch + "/copy-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) } }
        guard (try? FileManager.default.copyItem(atPath: file, toPath: copy)) != nil else { return false }
        if FileManager.default.fileExists(atPath: file + "-wal") {
            guard (try? FileManager.default.copyItem(atPath: file + "-wal", toPath: copy + "-wal")) != nil else { return false }
        }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let rows = try DatabaseQueue(path: copy, configuration: configuration).read { try String.fetchAll($0, sql: "PRAGMA quick_check") }
            return rows != ["ok"]
        } catch {
            return true
        }
    }

    @Test("a damaged database is kept byte for byte and named in the log and in lsctl status; the daemon starts on a new one within 5 s and opens work",
          arguments: ["registry.sqlite", "pasteboard.sqlite"], Damage.allCases)
    func damagedDatabaseKept(file: String, damage: Damage) throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let path = state + "/" + file
        // Something to lose in each database: a registration by hand and a default; a kept pasteboard.
        #expect(try h.lsctl("register", try h.bundleOutsideAppsFolders("manual")).status == 0)
        #expect(try h.lsctl("default", "alpha", "test.alpha").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "kept text").status == 0)
        var written = Data()
        try h.restart(signal: SIGTERM, within: 5) {
            try checkpoint(path)
            written = try damage.apply(to: path)
            try #require(sqliteFindsDamaged(path, scratch: h.root), "the test damaged \(file) beyond what SQLite accepts")
        }

        // Opens of folder apps work.
        let opened = try h.lsopen("--json", "alpha:after-damage")
        #expect(opened.status == 0, "\(opened.stdout) \(opened.stderr)")
        // The damaged file is kept, byte for byte, beside a new one.
        let names = try FileManager.default.contentsOfDirectory(atPath: state)
        let kept = names.filter { $0.hasPrefix(file + ".damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        try #require(kept.count == 1, "\(names)")
        let keptPath = state + "/" + kept[0]
        #expect(FileManager.default.contents(atPath: keptPath) == written, "kept byte for byte")
        #expect(FileManager.default.fileExists(atPath: path), "a new \(file) was started")
        // Named in the log, at error level …
        let log = h.daemonOutput.split(separator: "\n")
        #expect(log.contains { $0.contains(" error ") && $0.contains(keptPath) }, "\(h.daemonOutput)")
        // … and in lsctl status, as text and as JSON, with what was lost.
        let status = try h.lsctl("status")
        #expect(status.stdout.contains(keptPath), "\(status.stdout)")
        let report = try #require(try h.lsctl("status", "--json").json?["damagedDatabases"] as? [[String: Any]])
        #expect(report.count == 1, "\(report)")
        #expect(report.first?["keptAs"] as? String == keptPath, "\(report)")
        #expect(report.first?["file"] as? String == path, "\(report)")
        let lost = report.first?["lost"] as? String ?? ""
        let apps = try h.lsctl("apps", "--json").stdout
        let pasted = try h.lsctl("pasteboard", "paste", "--name", "kept")
        if file == "registry.sqlite" {
            #expect(lost.contains("registered by hand") && lost.contains("default"), "\(lost)")
            #expect(!apps.contains("test.manual"), "the registration by hand was in the damaged file: \(apps)")
            #expect(apps.contains("test.alpha"), "the apps folder is registered again: \(apps)")
            #expect(pasted.stdout == "kept text", "the pasteboard database was not touched: \(pasted.stderr)")
            #expect(try h.lsctl("register", h.root + "/elsewhere/manual.app").status == 0, "the new registry takes registrations")
        } else {
            #expect(lost.contains("persistent pasteboard"), "\(lost)")
            #expect(pasted.status != 0, "the kept pasteboard was in the damaged file")
            #expect(apps.contains("test.manual"), "the registry was not touched: \(apps)")
            #expect(try h.lsctl("pasteboard", "copy", "--name", "again", "--persistent", "--text", "new").status == 0, "the new file keeps pasteboards")
        }
        // The next start finds nothing damaged and does not set the new file aside (the kept
        // one is still named: KeptDatabaseStatusTests).
        try h.restart(signal: SIGTERM, within: 5)
        let again = try h.lsctl("status", "--json").json?["damagedDatabases"] as? [[String: Any]] ?? []
        #expect(again.map { $0["keptAs"] as? String } == [keptPath], "\(again)")
        let after = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix(file + ".damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        #expect(after == kept, "\(after)")
    }

    @Test("a damaged registry beside a non-empty write-ahead log (the daemon killed, then the file damaged): both are kept byte for byte under one name")
    func damagedWithItsLog() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let path = state + "/registry.sqlite"
        #expect(try h.lsctl("register", try h.bundleOutsideAppsFolders("manual")).status == 0)
        // A clean stop folds the log into the file, so the file holds the registration …
        try h.restart(signal: SIGTERM, within: 5)
        // … and what follows is only in the log when the daemon is killed.
        #expect(try h.lsctl("default", "alpha", "test.alpha").status == 0)
        var before: [String: Data] = [:]
        try h.restart(signal: SIGKILL, within: 5) {
            try #require((FileManager.default.contents(atPath: path + "-wal")?.count ?? 0) > 0, "SIGKILL left a non-empty log")
            _ = try Damage.corrupted.apply(to: path)
            try #require(sqliteFindsDamaged(path, scratch: h.root), "the test damaged the registry beyond what SQLite accepts")
            before = DatabaseCopy.bytes(path)
        }
        #expect(before["-wal"] != nil && before["-shm"] == nil, "the daemon's files: a file and its log, no -shm: \(before.keys)")
        #expect(try h.lsopen("alpha:after-damage").status == 0)
        let report = try #require(try h.lsctl("status", "--json").json?["damagedDatabases"] as? [[String: Any]])
        let keptAs = try #require(report.first?["keptAs"] as? String, "\(report)")
        #expect(keptAs.hasPrefix(path + ".damaged-") && !keptAs.hasSuffix("-wal"), "\(keptAs)")
        #expect(DatabaseCopy.bytes(keptAs) == before, "the file and its log are kept byte for byte, the log as \(keptAs)-wal")
        // The entry, with the lines SQLite's quick_check report may run on to (until the next
        // entry's timestamp): which lines it takes depends on the damage.
        let lines = h.daemonOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let start = lines.firstIndex { $0.contains(" error ") && $0.contains(keptAs) } ?? lines.endIndex
        let end = lines[start...].dropFirst().firstIndex { $0.hasPrefix("20") } ?? lines.endIndex
        let log = lines[start..<end].joined(separator: "\n")
        #expect(log.contains("with its -wal"), "\(log)")
    }

    @Test("a missing registry beside its write-ahead log: the log is what is kept, named as such, byte for byte, with advice that fits a log")
    func missingFileWithItsLog() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let path = state + "/registry.sqlite"
        #expect(try h.lsctl("register", try h.bundleOutsideAppsFolders("manual")).status == 0)
        var walBytes = Data()
        try h.restart(signal: SIGKILL, within: 5) {
            walBytes = FileManager.default.contents(atPath: path + "-wal") ?? Data()
            try #require(!walBytes.isEmpty, "SIGKILL left a non-empty log")
            try FileManager.default.removeItem(atPath: path)
        }
        #expect(try h.lsopen("alpha:after-loss").status == 0)
        let report = try #require(try h.lsctl("status", "--json").json?["damagedDatabases"] as? [[String: Any]])
        #expect(report.count == 1, "\(report)")
        let keptAs = try #require(report.first?["keptAs"] as? String, "\(report)")
        #expect(keptAs.hasPrefix(path + ".damaged-") && keptAs.hasSuffix("-wal"), "the report names the file that exists: \(keptAs)")
        #expect(FileManager.default.contents(atPath: keptAs) == walBytes, "the log is kept byte for byte")
        let kept = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.contains(".damaged-") }
        #expect(kept == [(keptAs as NSString).lastPathComponent], "only the log was there to keep: \(kept)")
        let log = h.daemonOutput.split(separator: "\n").first { $0.contains(" error ") && $0.contains(keptAs) } ?? ""
        #expect(!log.isEmpty, "\(h.daemonOutput)")
        #expect(!log.contains(".recover"), "a log alone cannot be recovered with sqlite3: \(log)")
        #expect(log.contains("cannot be read without"), "\(log)")
    }

    @Test("when the log of a damaged registry cannot be moved, the file is put back and the start stops, naming both",
          .enabled(if: StorageFailureTests.chattrWorks, "needs root and a temporary folder where chattr +i works (a log that cannot be renamed)"))
    func setAsideRolledBack() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let path = state + "/registry.sqlite"
        try h.restart(signal: SIGTERM, within: 5)
        #expect(try h.lsctl("register", try h.bundleOutsideAppsFolders("manual")).status == 0)
        kill(h.daemonPID, SIGKILL)
        try h.eventually("the daemon dies") { !isAlive(h.daemonPID) }
        _ = try Damage.corrupted.apply(to: path)
        try #require(sqliteFindsDamaged(path, scratch: h.root), "the test damaged the registry beyond what SQLite accepts")
        try #require(try StorageFailureTests.chattr("+i", path + "-wal"))
        defer { _ = try? StorageFailureTests.chattr("-i", path + "-wal") }
        let before = DatabaseCopy.bytes(path)
        let refused = try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--socket", h.socket, "--apps", h.appsFolder, "--state", state],
                                           scratch: h.root, timeout: 20)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("cannot set aside \(path)") && refused.stderr.contains(path + "-wal") && refused.stderr.contains("nothing was changed"),
                "\(refused.stderr)")
        #expect(DatabaseCopy.bytes(path) == before, "the file and its log are back where they were, unchanged")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).allSatisfy { !$0.contains(".damaged-") })
    }

    @Test("a pasteboard database that cannot be opened (not damage) is left alone: the daemon serves, persistent copies are refused by name")
    func unopenablePasteboardDatabase() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let file = h.root + "/state/pasteboard.sqlite"
        try h.restart(signal: SIGTERM, within: 5) {
            // A folder where the file should be: SQLite cannot open it, and it is not a damaged database.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            try FileManager.default.createDirectory(atPath: file + "/not-a-database", withIntermediateDirectories: true)
        }
        #expect(try h.lsopen("alpha:served").status == 0)
        let problems = try h.lsctl("status", "--json").json?["storageProblems"] as? [String] ?? []
        #expect(problems.count == 1 && problems.first?.contains(file) == true, "\(problems)")
        #expect(try h.lsctl("status").stdout.contains(file))
        let refused = try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "x")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("cannot be kept") && refused.stderr.contains(file), "\(refused.stderr)")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").status != 0, "the refused copy changed nothing")
        #expect(try h.lsctl("pasteboard", "copy", "--name", "memory", "--text", "y").status == 0, "pasteboards in memory work")
        #expect(FileManager.default.fileExists(atPath: file + "/not-a-database"), "what is there is left alone")
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.root + "/state").allSatisfy { !$0.contains(".damaged-") })
    }

    @Test("a registry that cannot be opened (not damage) stops the start with the file named, and is left alone")
    func unopenableRegistry() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let state = h.root + "/state"
        let file = state + "/registry.sqlite"
        kill(h.daemonPID, SIGTERM)
        try h.eventually("the daemon stops") { !isAlive(h.daemonPID) }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        try FileManager.default.createDirectory(atPath: file + "/not-a-database", withIntermediateDirectories: true)
        let refused = try ChildProcess.run(DaemonHarness.binary("launchservicesd"), ["--socket", h.socket, "--apps", h.appsFolder, "--state", state],
                                           scratch: h.root, timeout: 20)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("cannot check \(file)"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: file + "/not-a-database"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).allSatisfy { !$0.contains(".damaged-") })
    }
}
