import Foundation
import LaunchServicesClient
import LaunchServicesTesting
import Testing

/// What the state databases do when the disk says no, and what they leave behind.
@Suite("Storage failures")
struct StorageFailureTests {
    /// Whether `chattr +i` works here (root, and a file system with the immutable flag),
    /// tried on a file in the temporary folder the tests use.
    static let chattrWorks: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") else { return false }
        guard let folder = try? TemporaryFolder(prefix: "lschattr") else { return false }
        defer { folder.remove() }
        let probe = folder.path + "/probe"
        guard FileManager.default.createFile(atPath: probe, contents: Data("x".utf8)),
              (try? chattr("+i", probe)) == true else { return false }
        let refused = open(probe, O_WRONLY | O_CLOEXEC)
        if refused >= 0 { close(refused) }
        _ = try? chattr("-i", probe)
        return refused < 0
    }()

    @discardableResult
    static func chattr(_ flag: String, _ path: String) throws -> Bool {
        try ChildProcess.run("/usr/bin/chattr", [flag, path], scratch: NSTemporaryDirectory(), timeout: 10).status == 0
    }

    @Test("a database file that cannot be written: lsctl register gets a named error, the daemon lives and opens work; no shared memory is mapped",
          .enabled(if: chattrWorks, "needs root and a temporary folder where chattr +i works (to make a database file unwritable)"))
    func unwritableDatabase() throws {
        let h = try DaemonHarness(apps: [.test("alpha")])
        defer { h.stop() }
        let file = h.root + "/state/registry.sqlite"
        let fm = FileManager.default
        // SQLite's shared-memory index, if there is one (it would be mapped), else the log
        // every write goes to first.
        let target = fm.fileExists(atPath: file + "-shm") ? file + "-shm" : file + "-wal"
        try #require(fm.fileExists(atPath: target), "\(target) exists: \((try? fm.contentsOfDirectory(atPath: h.root + "/state")) ?? [])")
        try #require(try Self.chattr("+i", target))
        defer { _ = try? Self.chattr("-i", target) }

        let register = try h.lsctl("register", try h.bundleOutsideAppsFolders("manual"))
        #expect(register.status != 0)
        #expect(register.stderr.contains(file), "names the file: \(register.stderr)")
        #expect(register.stderr.contains("disk I/O error") || register.stderr.contains("not permitted"), "says why: \(register.stderr)")
        #expect(isAlive(h.daemonPID), "the daemon lives: \(h.daemonOutput)")
        let opened = try h.lsopen("--json", "alpha:while-unwritable")
        #expect(opened.status == 0, "\(opened.stdout) \(opened.stderr)")
        #expect(!fm.fileExists(atPath: file + "-shm"), "no shared-memory index: nothing mapped that could SIGBUS")
        #expect(!fm.fileExists(atPath: h.root + "/state/pasteboard.sqlite-shm"))

        // Writable again: the next registration is saved.
        try #require(try Self.chattr("-i", target))
        let again = try h.lsctl("register", h.root + "/elsewhere/manual.app")
        #expect(again.status == 0, "\(again.stderr)")
        try h.restart(signal: SIGKILL)
        #expect(try h.lsctl("apps", "--json").stdout.contains("test.manual"), "the registration made after the failure was saved")
    }

    /// Whether a test may mount a small tmpfs (root, with mount allowed): a disk of a chosen size.
    static let tmpfsWorks: Bool = {
        guard getuid() == 0, let folder = try? TemporaryFolder(prefix: "lstmpfs") else { return false }
        defer { folder.remove() }
        guard (try? mount(size: "64k", at: folder.path)) == true else { return false }
        _ = try? umount(folder.path)
        return true
    }()

    static func mount(size: String, at path: String) throws -> Bool {
        try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", path], scratch: NSTemporaryDirectory(), timeout: 10).status == 0
    }

    @discardableResult
    static func umount(_ path: String) throws -> Bool {
        try ChildProcess.run("/bin/umount", [path], scratch: NSTemporaryDirectory(), timeout: 10).status == 0
    }

    /// Bytes used and bytes available on the file system holding `path`.
    static func space(_ path: String) throws -> (used: Int, available: Int) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw HarnessError("statvfs \(path): \(String(cString: strerror(errno)))") }
        return (Int(info.f_blocks - info.f_bfree) * Int(info.f_frsize), Int(info.f_bavail) * Int(info.f_frsize))
    }

    @Test("a first start on a nearly full disk needs no more room than the files it creates: no VACUUM of a new database",
          .enabled(if: tmpfsWorks, "needs root and mount -t tmpfs (a small disk of a known size)"))
    func firstStartOnNearlyFullDisk() throws {
        let folder = try TemporaryFolder(prefix: "lsfull")
        defer { folder.remove() }
        let disk = folder.path + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path + "/apps", withIntermediateDirectories: true)
        try #require(try Self.mount(size: "8m", at: disk))
        defer { _ = try? Self.umount(disk) }
        func start(_ name: String) throws -> DaemonProcess {
            try DaemonProcess(executable: DaemonHarness.binary("launchservicesd"), socket: folder.path + "/\(name).socket",
                              arguments: ["--apps", folder.path + "/apps", "--state", disk + "/\(name)"], log: folder.path + "/\(name).log")
        }
        // What a first start writes, measured with room to spare: everything is written
        // before the daemon serves its socket.
        let empty = try Self.space(disk).used
        let needed: Int
        do {
            let measured = try start("roomy")
            defer { measured.stop() }
            needed = try Self.space(disk).used - empty
        }
        try FileManager.default.removeItem(atPath: disk + "/roomy")
        // The same start with that much room and 8 KiB more.
        let filler = try Self.space(disk).available - needed - 8192
        try #require(filler > 0)
        try Data(count: filler).write(to: URL(fileURLWithPath: disk + "/filler"))
        let left = try Self.space(disk).available
        try #require(left < needed + 64 * 1024, "the disk is nearly full: \(left) bytes left, \(needed) needed")
        let tight = try start("tight")
        defer { tight.stop() }
        let client = try LaunchServicesClient(socketPath: folder.path + "/tight.socket", program: "storage-tests")
        defer { client.close() }
        #expect(try client.query(.status).contains("\"appsRegistered\""), "the daemon started and serves: \(tight.output)")
    }

    /// Whether `marker` is in any of a database's files (the file, its log, its shared memory).
    func bytesContain(_ file: String, _ marker: String) -> [String] {
        ["", "-wal", "-shm"].filter { suffix in
            FileManager.default.contents(atPath: file + suffix)?.range(of: Data(marker.utf8)) != nil
        }.map { file + $0 }
    }

    @Test("clearing a password-protected persistent pasteboard leaves none of its bytes in pasteboard.sqlite or its log, running or stopped")
    func clearedProtectedPasteboardErased() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let file = h.root + "/state/pasteboard.sqlite"
        let marker = "erase-me-\(UUID().uuidString)"
        #expect(try h.lsctl("pasteboard", "copy", "--name", "vault", "--persistent", "--password", "pw-4711", "--text", marker).status == 0)
        #expect(!bytesContain(file, marker).isEmpty, "the right files are read: the copy is in them")
        let cleared = try h.lsctl("pasteboard", "clear", "--name", "vault", "--password", "pw-4711")
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(bytesContain(file, marker) == [], "while the daemon runs")
        try h.restart(signal: SIGTERM) {
            #expect(bytesContain(file, marker) == [], "after it stopped")
        }
        #expect(bytesContain(file, marker) == [], "after it started again")
    }
}
