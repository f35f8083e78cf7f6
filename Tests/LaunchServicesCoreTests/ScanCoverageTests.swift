import LaunchServicesCore
import Testing

/// `ScanCoverage`: a scan withdraws a folder app only where it saw it gone.
@Suite("ScanCoverage: what an incomplete scan may withdraw")
struct ScanCoverageTests {
    static let emfile = "Too many open files"

    @Test("a complete scan saw gone whatever it did not find, wherever it was")
    func complete() {
        let coverage = ScanCoverage(readFolders: ["/apps"])
        #expect(coverage.isComplete)
        #expect(coverage.sawGone(bundleAt: "/apps/a.app"))
        #expect(coverage.sawGone(bundleAt: "/elsewhere/linked.app"))
    }

    @Test("a folder that could not be read keeps its apps; another folder read in full does not")
    func unreadableFolder() {
        let coverage = ScanCoverage(readFolders: ["/read", "/real/read"],
                                    unreadable: [UnreadablePath(kind: .appsFolder, path: "/link/apps", canonicalPath: "/real/apps", reason: Self.emfile)])
        #expect(!coverage.isComplete)
        #expect(!coverage.sawGone(bundleAt: "/real/apps/a.app"), "canonical path of the unreadable folder")
        #expect(!coverage.sawGone(bundleAt: "/link/apps/a.app"), "the folder as configured")
        #expect(coverage.sawGone(bundleAt: "/read/b.app"))
        #expect(coverage.sawGone(bundleAt: "/real/read/b.app"))
        #expect(coverage.sawGone(bundleAt: "/read/b.app/"), "a trailing slash changes nothing")
    }

    @Test("a bundle that could not be read is kept; its neighbours in a folder read in full are not")
    func unreadableBundle() {
        let coverage = ScanCoverage(readFolders: ["/apps"],
                                    unreadable: [UnreadablePath(kind: .bundle, path: "/apps/link.app", canonicalPath: "/store/real.app", reason: "Info.plist: Input/output error")])
        #expect(!coverage.sawGone(bundleAt: "/store/real.app"), "by its canonical path")
        #expect(!coverage.sawGone(bundleAt: "/apps/link.app"), "by its path in the folder")
        #expect(coverage.sawGone(bundleAt: "/apps/other.app"))
    }

    @Test("while anything could not be read, a bundle in no folder read in full (linked from elsewhere, or nested) is kept")
    func unknownOrigin() {
        let coverage = ScanCoverage(readFolders: ["/apps"],
                                    unreadable: [UnreadablePath(kind: .appsFolder, path: "/other", reason: Self.emfile)])
        #expect(!coverage.sawGone(bundleAt: "/elsewhere/linked.app"))
        #expect(!coverage.sawGone(bundleAt: "/apps/sub/nested.app"))
        #expect(!coverage.sawGone(bundleAt: "/top.app"))
    }

    @Test("descriptions name the folder or bundle and the reason, control characters escaped")
    func descriptions() {
        #expect(UnreadablePath(kind: .appsFolder, path: "/apps", reason: Self.emfile).description == "apps folder /apps could not be read (Too many open files)")
        #expect(UnreadablePath(kind: .bundle, path: "/apps/a\n.app", reason: "Info.plist: Input/output error").description
                == "bundle /apps/a\\n.app could not be read (Info.plist: Input/output error)")
    }
}
