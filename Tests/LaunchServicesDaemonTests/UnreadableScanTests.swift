import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// A scan tells what it could not read now from what is not there or is refused: only the
/// latter is the user's doing (`ReadFailure`).
@Suite("BundleLoader: what a scan could not read")
struct UnreadableScanTests {
    let helper = BundleLoaderFolderTests()

    @Test("not there, not a folder, a symbolic-link loop: the user's doing; every other errno: could not be read now",
          arguments: [(ENOENT, true), (ENOTDIR, true), (ELOOP, true), (ENAMETOOLONG, true),
                      (EMFILE, false), (ENFILE, false), (ENOMEM, false), (EIO, false), (EINTR, false), (EAGAIN, false),
                      (EACCES, false), (EPERM, false), (ESTALE, false)])
    func classification(code: Int32, absence: Bool) {
        #expect(ReadFailure.isAbsence(code) == absence, "\(ReadFailure.text(code))")
    }

    @Test("a folder's listing: its entries; absent when missing, a file or a link loop")
    func listing() throws {
        try TemporaryFolder.with { root in
            try writeFile("x", to: root + "/apps/a")
            try FileManager.default.createDirectory(atPath: root + "/apps/b.app", withIntermediateDirectories: true)
            try writeFile("a file", to: root + "/file")
            #expect(symlink(root + "/loop", root + "/loop") == 0)
            guard case .entries(let names) = FolderListing.read(root + "/apps") else {
                Issue.record("not listed: \(FolderListing.read(root + "/apps"))")
                return
            }
            #expect(names.sorted() == ["a", "b.app"])
            #expect(FolderListing.read(root + "/missing") == .absent)
            #expect(FolderListing.read(root + "/file") == .absent)
            #expect(FolderListing.read(root + "/loop") == .absent)
            #expect(FolderListing.read(root + "/file/below") == .absent, "ENOTDIR")
        }
    }

    @Test("a folder that cannot be listed now is named with the reason and yields nothing; the other folders are read; a missing one is read (empty)")
    func unreadableFolder() throws {
        try TemporaryFolder.with { root in
            try helper.makeBundle(at: root + "/busy/a.app", plist: BundleLoaderFolderTests.plist(id: "com.busy"))
            try helper.makeBundle(at: root + "/fine/b.app", plist: BundleLoaderFolderTests.plist(id: "com.fine"))
            let result = BundleLoader.scan(folders: [root + "/busy/", root + "/fine", root + "/missing"]) { folder in
                folder.hasSuffix("/busy") ? .unreadable(EMFILE) : FolderListing.read(folder)
            }
            #expect(result.bundles.map(\.id) == ["com.fine"])
            #expect(result.errors.isEmpty)
            #expect(result.coverage.unreadable.map(\.description) == ["apps folder \(root)/busy could not be read (Too many open files)"])
            #expect(result.coverage.readFolders.isSuperset(of: [root + "/fine", root + "/missing"]))
            #expect(!result.coverage.sawGone(bundleAt: root + "/busy/a.app"))
            #expect(result.coverage.sawGone(bundleAt: root + "/fine/gone.app"))
            #expect(result.coverage.sawGone(bundleAt: root + "/missing/gone.app"), "a folder that is not there holds nothing")
        }
    }

    @Test("an Info.plist that fails with an I/O error is unreadable, not refused; load still refuses it by name")
    func unreadableInfoPlist() throws {
        try TemporaryFolder.with { root in
            // /proc/self/mem is a regular file whose first page is never mapped: reading it at
            // offset 0 fails with EIO, even as root.
            let bundle = try helper.makeBundle(at: root + "/apps/eio.app", plist: "")
            try FileManager.default.removeItem(atPath: bundle + "/Info.plist")
            #expect(symlink("/proc/self/mem", bundle + "/Info.plist") == 0)
            try helper.makeBundle(at: root + "/apps/good.app", plist: BundleLoaderFolderTests.plist(id: "com.good"))
            let result = BundleLoader.scan(folders: [root + "/apps"])
            #expect(result.bundles.map(\.id) == ["com.good"])
            #expect(result.errors.isEmpty, "\(result.errors)")
            #expect(result.coverage.unreadable == [UnreadablePath(kind: .bundle, path: bundle, canonicalPath: bundle, reason: "Info.plist: Input/output error")])
            #expect(!result.coverage.sawGone(bundleAt: bundle))
            #expect(result.coverage.sawGone(bundleAt: root + "/apps/other.app"))
            #expect(helper.loadError(bundle) == BundleError(path: bundle, key: nil, problem: "has no readable Info.plist: Input/output error"))
        }
    }

    @Test("the user's doing is still refused or skipped, never unreadable: no Info.plist, a FIFO, a missing executable")
    func stillRefused() throws {
        try TemporaryFolder.with { root in
            try FileManager.default.createDirectory(atPath: root + "/apps/empty.app", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/apps/fifo.app", withIntermediateDirectories: true)
            #expect(mkfifo(root + "/apps/fifo.app/Info.plist", 0o644) == 0)
            try helper.makeBundle(at: root + "/apps/noexec.app", plist: BundleLoaderFolderTests.plist(id: "com.noexec"), executable: nil)
            #expect(symlink(root + "/nowhere", root + "/apps/dangling.app") == 0)
            let result = BundleLoader.scan(folders: [root + "/apps"])
            #expect(result.coverage.isComplete, "\(result.coverage.unreadable)")
            #expect(result.errors.map(\.path) == [root + "/apps/fifo.app", root + "/apps/noexec.app"])
        }
    }
}
