import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import Testing

/// A registry a clean stop left unchanged is not read in full again at the next start
/// (`CleanClose`), and the check comes back whenever that cannot be known: after a crash,
/// after any write while the daemon was stopped, and when damage no write made is met at a read.
@Suite("Registry store: the check after a clean stop")
struct CleanCloseTests {
    func folder() -> String { NSTemporaryDirectory() + "lsclean-\(UUID().uuidString)" }

    func app(_ i: Int, _ source: String = "m") -> AppBundle {
        AppBundle(id: "\(source).app\(i)", name: "App \(i)", path: "/p/\(source)\(i).app", executable: "x",
                  schemes: [try! URLScheme(validating: "\(source)s\(i)")])
    }

    @Test("a clean close is trusted once; open, the record is gone (a crash leaves none); a write while stopped brings the check back")
    func trustedOnlyUnchanged() throws {
        let state = folder()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let path = RegistryStore.path(in: state)
        do {
            let store = try RegistryStore(folder: state)
            #expect(!store.checkSkipped, "a new file")
            try store.save([(app(1), 1)], source: .manual)
            try store.close()
        }
        #expect(CleanClose.matches(path))
        do {
            let store = try RegistryStore(folder: state)
            #expect(store.checkSkipped)
            #expect(!FileManager.default.fileExists(atPath: CleanClose.recordPath(path)), "removed while open: a crash now leaves none")
            try store.close()
        }
        // The same bytes written back: only the file's times change.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let first = try handle.read(upToCount: 1) ?? Data()
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: first)
        try handle.close()
        #expect(!CleanClose.matches(path))
        let store = try RegistryStore(folder: state)
        #expect(!store.checkSkipped)
        #expect(try store.load().apps.map(\.app.id) == ["m.app1"])
        try store.close()
    }

    @Test("damage no write made, met at the start's reads, is checked and set aside")
    func damageBehindARecord() throws {
        let state = folder()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let path = RegistryStore.path(in: state)
        do {
            let store = try RegistryStore(folder: state)
            try store.save((0..<300).map { (app($0), Int64($0)) }, source: .manual)
            try store.replaceFolderApps((0..<300).map { (app($0, "f"), Int64($0)) })
            try store.close()
        }
        // Every page after the first two overwritten, then a record as if a clean stop had
        // left the file so: the disk's own damage, which no record can see.
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 8192)
        try handle.write(contentsOf: Data(repeating: 0x55, count: size - 8192))
        try handle.close()
        CleanClose.record(path)
        #expect(CleanClose.matches(path))
        let started = try RegistryService.start(stateFolder: state, folders: [], scan: { _ in BundleLoader.ScanResult() })
        defer { try? started.store?.close() }
        #expect(started.store?.damage != nil, "checked, found damaged, set aside")
        #expect(started.store?.checkSkipped == false)
        #expect(started.counts == RegistryStore.Counts(apps: 0, schemes: 0))
    }

    @Test("a load that fails after a trusted start leaves the next start checking, however the daemon stops")
    func distrustAfterAFailedRead() throws {
        let state = folder()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let path = RegistryStore.path(in: state)
        do {
            let store = try RegistryStore(folder: state)
            try store.save([(app(1), 1)], source: .manual)
            try store.close()
        }
        let store = try RegistryStore(folder: state)
        #expect(store.checkSkipped)
        store.distrustCleanClose()
        try store.close()
        #expect(!CleanClose.matches(path))
        #expect(!FileManager.default.fileExists(atPath: CleanClose.recordPath(path)))
    }
}
