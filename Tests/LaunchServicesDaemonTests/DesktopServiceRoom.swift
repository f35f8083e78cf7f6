import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

/// The desktop-entries room on an embedded loop for `DesktopServiceTests`: its reads held
/// back on a worker the test runs by hand, its watch triggered by the test, its log kept.
extension DesktopServiceTests {
    /// Work the service hands its worker, run when the test says.
    final class HeldWork: Sendable {
        private let work = NIOLockedValueBox<[@Sendable () -> Void]>([])
        var queue: WorkQueue { WorkQueue(label: "held") { [work] item in work.withLockedValue { $0.append(item) } } }
        var count: Int { work.withLockedValue { $0.count } }

        /// Runs what is waiting (not what that queues); returns how many ran.
        @discardableResult
        func run() -> Int {
            let items = work.withLockedValue { items in
                defer { items = [] }
                return items
            }
            for item in items { item() }
            return items.count
        }
    }

    /// A watcher the test triggers, which remembers what it was asked to watch.
    final class Watcher: FolderWatching {
        let onChange: @Sendable () -> Void
        let folders = NIOLockedValueBox<[[String]]>([])
        let cancelled = NIOLockedValueBox(false)
        init(_ onChange: @escaping @Sendable () -> Void) { self.onChange = onChange }
        func watch(_ folders: [String]) { self.folders.withLockedValue { $0.append(folders) } }
        func cancel() { cancelled.withLockedValue { $0 = true } }
    }

    /// One service on an embedded loop over private XDG folders under `root`.
    final class Room {
        let root: String
        let loop = EmbeddedEventLoop()
        let held = HeldWork()
        let lines = NIOLockedValueBox<[String]>([])
        let watchers = NIOLockedValueBox<[Watcher]>([])
        /// Set: the data home's `applications` reads as unreadable (out of descriptors).
        let busy = NIOLockedValueBox(false)
        let reads = NIOLockedValueBox(0)
        var changes: [[String]] = []
        var service: DesktopService!

        init(_ root: String, settings: DesktopEntrySettings = DesktopEntrySettings(), maximumWaiting: Int = 4096) {
            self.root = root
            let environment = Self.environment(root)
            let (watchers, busy, reads) = (watchers, busy, reads)
            service = DesktopService(
                settings: settings, environment: environment, home: root + "/home", loop: loop,
                logger: Logger(label: "desktop-service-tests") { [lines] _ in RecordingLogHandler(lines: lines, logLevel: .debug) },
                worker: held.queue,
                makeWatcher: { onChange in
                    let watcher = Watcher(onChange)
                    watchers.withLockedValue { $0.append(watcher) }
                    return watcher
                },
                wallClock: { 1_700_000_000_000 }, maximumWaiting: maximumWaiting, firstReadWait: .seconds(10),
                readLayout: { environment, home in
                    reads.withLockedValue { $0 += 1 }
                    var result = DesktopLayoutReader().read(environment: environment, home: home)
                    guard busy.withLockedValue({ $0 }) else { return result }
                    // As a read at the descriptor limit finds it: the folder not listed.
                    let folder = root + "/data/applications"
                    if let index = result.layout.folders.firstIndex(where: { $0.path == folder }) { result.layout.folders[index].entries = [:] }
                    result.unreadable = [DesktopUnreadable(kind: .folder, path: folder, reason: "Too many open files")]
                    return result
                })
            service.changed = { [unowned self] in changes.append($0) }
        }

        static func environment(_ root: String) -> [String: String] {
            ["HOME": root + "/home", "XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/sys", "XDG_CONFIG_HOME": root + "/home/.config",
             "XDG_CONFIG_DIRS": root + "/etc", "PATH": root + "/bin"]
        }

        var log: [String] { lines.withLockedValue { $0 } }
        var watcher: Watcher? { watchers.withLockedValue { $0.last } }

        /// Runs the held reads and what they send back to the loop.
        func finishReads() {
            while held.run() > 0 { loop.run() }
        }

        func advance(by amount: TimeAmount) {
            loop.advanceTime(by: amount)
            loop.run()
        }

        /// A desktop entry for `scheme`, running the installed `prog`.
        func entry(_ relative: String, scheme: String, in folder: String = "data") throws {
            try writeFile("[Desktop Entry]\nType=Application\nName=x\nExec=prog %u\nMimeType=x-scheme-handler/\(scheme);\n", to: root + "/\(folder)/applications/" + relative)
        }

        func mimeapps(_ text: String) throws { try writeFile(text, to: root + "/home/.config/mimeapps.list") }
    }

    /// Runs `body` with a room whose PATH holds `prog`.
    func with(settings: DesktopEntrySettings = DesktopEntrySettings(), maximumWaiting: Int = 4096, _ body: (Room) throws -> Void) throws {
        try TemporaryFolder.with(prefix: "ls-desktop-room") { root in
            try writeFile("#!/bin/sh\n", to: root + "/bin/prog")
            #expect(chmod(root + "/bin/prog", 0o755) == 0)
            let room = Room(root, settings: settings, maximumWaiting: maximumWaiting)
            defer {
                room.service.stop()
                try? room.loop.syncShutdownGracefully()
            }
            try body(room)
        }
    }
}
