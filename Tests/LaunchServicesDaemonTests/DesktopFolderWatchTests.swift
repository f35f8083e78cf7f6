import Dispatch
import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import NIOConcurrencyHelpers
import Testing

/// The inotify watcher as the desktop folders use it (`subfolders: false`, `DesktopWatch`'s
/// names): a program writing its own files in `~/.config` is no change, a `mimeapps.list` or
/// a desktop entry is. Each "no change" is exact, not a wait: inotify reports events in
/// order, so once the watcher has judged an event made later, it has judged the earlier one,
/// and a barrier on its queue means it has finished with both.
@Suite("FolderWatcher for the desktop folders")
struct DesktopFolderWatchTests {
    final class Probe: Sendable {
        let queue = DispatchQueue(label: "desktop-watch-tests")
        let changes = NIOLockedValueBox(0)
        let judged = NIOLockedValueBox<[String]>([])
        let signal = DispatchSemaphore(value: 0)

        func makeWatcher() throws -> FolderWatcher {
            let (changes, judged, signal) = (changes, judged, signal)
            let watcher = FolderWatcher(queue: queue, subfolders: false, relevant: { name in
                judged.withLockedValue { $0.append(name) }
                return DesktopWatch.isRelevant(name)
            }, onChange: {
                changes.withLockedValue { $0 += 1 }
                signal.signal()
            })
            return try #require(watcher)
        }

        /// Waits (at most 10 s) until the watcher has judged `name`, then until it is done.
        func waitUntilJudged(_ name: String) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if judged.withLockedValue({ $0.contains(name) }) {
                    queue.sync {}
                    return true
                }
                usleep(5000)
            }
            return false
        }

        /// Waits (at most 10 s) for a change.
        func waitForChange() -> Bool { signal.wait(timeout: .now() + 10) == .success }
        var count: Int { changes.withLockedValue { $0 } }
    }

    @Test("another program's files in a watched folder and in its subfolders are no change; a mimeapps.list is")
    func configFolder() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-watch") { root in
            let config = root + "/config"
            try FileManager.default.createDirectory(atPath: config + "/someapp", withIntermediateDirectories: true)
            let probe = Probe()
            let watcher = try probe.makeWatcher()
            defer { watcher.cancel() }
            watcher.watch([config])
            probe.queue.sync {}
            try writeFile("x=1\n", to: config + "/someapp/settings.conf")
            try writeFile("y=2\n", to: config + "/kwinrc")
            #expect(probe.waitUntilJudged("kwinrc"))
            #expect(probe.count == 0)
            #expect(!probe.judged.withLockedValue { $0 }.contains("settings.conf"), "a subfolder is not watched")
            try writeFile("[Default Applications]\n", to: config + "/mimeapps.list")
            #expect(probe.waitForChange())
            try writeFile("[Default Applications]\n", to: config + "/gnome-mimeapps.list")
            #expect(probe.waitForChange())
        }
    }

    @Test("an applications folder: an entry, a cache and a new subfolder are changes")
    func applicationsFolder() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-watch") { root in
            let applications = root + "/applications"
            try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
            let probe = Probe()
            let watcher = try probe.makeWatcher()
            defer { watcher.cancel() }
            watcher.watch([applications])
            probe.queue.sync {}
            try writeFile("[Desktop Entry]\n", to: applications + "/a.desktop")
            #expect(probe.waitForChange())
            try writeFile("[MIME Cache]\n", to: applications + "/mimeinfo.cache")
            #expect(probe.waitForChange())
            try FileManager.default.createDirectory(atPath: applications + "/vendor", withIntermediateDirectories: false)
            #expect(probe.waitForChange())
        }
    }

    @Test("a folder added to the watch is not reported as a change (its reader has just read it); a change in it is")
    func newRootIsNoChange() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-watch") { root in
            for folder in ["a", "b"] { try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true) }
            let probe = Probe()
            let watcher = try probe.makeWatcher()
            defer { watcher.cancel() }
            watcher.watch([root + "/a"])
            watcher.watch([root + "/a", root + "/b"])
            probe.queue.sync {}
            try writeFile("z\n", to: root + "/b/other.txt")
            #expect(probe.waitUntilJudged("other.txt"))
            #expect(probe.count == 0)
            try writeFile("[Desktop Entry]\n", to: root + "/b/x.desktop")
            #expect(probe.waitForChange())
        }
    }

    @Test("a missing folder is waited for: its creation is a change, and so is an entry in it")
    func missingFolder() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-watch") { root in
            let applications = root + "/share/applications"
            let probe = Probe()
            let watcher = try probe.makeWatcher()
            defer { watcher.cancel() }
            watcher.watch([applications])
            probe.queue.sync {}
            try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
            #expect(probe.waitForChange())
            try writeFile("[Desktop Entry]\n", to: applications + "/a.desktop")
            #expect(probe.waitForChange())
        }
    }

    @Test("the names that matter", arguments: [("a.desktop", true), ("mimeapps.list", true), ("kde-mimeapps.list", true), ("defaults.list", true),
                                                ("mimeinfo.cache", true), ("mimeapps.list.swp", false), (".goutputstream-X1", false), ("kwinrc", false),
                                                ("a.desktop~", false)])
    func names(name: String, relevant: Bool) {
        #expect(DesktopWatch.isRelevant(name) == relevant)
    }
}

extension DesktopFolderWatchTests {
    @Test("a missing folder made with its missing parents at once (mkdir -p) is found, however the creations interleave with the watcher re-arming")
    func missingParentsMadeAtOnce() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-watch") { root in
            for round in 0..<40 {
                let base = root + "/r\(round)"
                try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
                let applications = base + "/usr/local/share/applications"
                let probe = Probe()
                let watcher = try probe.makeWatcher()
                defer { watcher.cancel() }
                watcher.watch([applications])
                probe.queue.sync {}
                try writeFile("[Desktop Entry]\n", to: applications + "/a.desktop")
                #expect(probe.waitForChange(), "round \(round)")
            }
        }
    }
}
