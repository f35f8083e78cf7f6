import Dispatch
import Foundation
import LaunchServicesCore
import NIOCore

/// Where the daemon runs blocking work off its event loop (file reads, database writes,
/// password hashes), in the order given. In the daemon, a thread of its own. In the testing
/// kit's in-process daemon, the loop itself: its `EmbeddedEventLoop` must never be touched
/// from another thread, and its tests must not depend on how threads happen to interleave.
package struct WorkQueue: Sendable {
    /// The thread's queue, which the folder watchers' dispatch sources need; `nil` on the loop.
    let dispatchQueue: DispatchQueue?
    /// What a log line calls it (a stop that gives up waiting for it names it).
    let label: String
    private let submit: @Sendable (@escaping @Sendable () -> Void) -> Void

    /// A serial thread named `label`.
    package static func thread(_ label: String) -> WorkQueue {
        let queue = DispatchQueue(label: label)
        return WorkQueue(dispatchQueue: queue, label: label) { queue.async(execute: $0) }
    }

    /// The loop itself: each piece of work runs as a later task on `loop`. It blocks the loop
    /// while it runs, so only a test's loop uses it.
    package static func onLoop(_ loop: EventLoop) -> WorkQueue {
        WorkQueue(dispatchQueue: nil, label: "the event loop") { loop.execute($0) }
    }

    /// Runs each piece of work at once on the caller's thread: for a test that wants the
    /// work's order without a thread.
    package static func inline(_ label: String) -> WorkQueue {
        WorkQueue(dispatchQueue: nil, label: label) { $0() }
    }

    func async(_ work: @escaping @Sendable () -> Void) { submit(work) }
}

/// The daemon's workers, its password hasher, its wall clock and the environment it reads the
/// desktop layout from, given at construction so the testing kit can run the workers on its
/// loop, choose the hasher, move the clock and give private XDG folders (deterministically).
package struct DaemonWorkers: Sendable {
    /// Bundle reads, check-in verification and the registry database (`RegistryService.files`).
    var files: WorkQueue
    /// Password hashes and checks: one at a time (`PasteboardService.worker`).
    var passwords: WorkQueue
    /// Writes of kept pasteboards (`PasteboardService.saver`).
    var pasteboardSaves: WorkQueue
    var hasher: any PasswordHasher
    /// Milliseconds since the Unix epoch: registration times and pasteboard expiry.
    var wallClock: @Sendable () -> Int64
    /// Makes the apps folders' watcher (`nil`: none could be made, the folders are not watched).
    var folderWatcher: FolderWatching.Maker
    /// Reads of the desktop layout (`DesktopService`): a thread of its own, so a large
    /// layout delays neither the registry's work nor the daemon's first answer.
    var desktopReads: WorkQueue
    /// Makes the desktop folders' watcher: each folder alone (no subfolders), changes to
    /// desktop entries and association files only (`DesktopWatch`).
    var desktopWatcher: FolderWatching.Maker
    /// The variables the desktop layout is read with (`XDG_*`, `HOME`, `PATH`,
    /// `XDG_CURRENT_DESKTOP`): the daemon's own environment, or the test's.
    var environment: [String: String]
    /// Makes what starts desktop apps (`DesktopLaunchers`): the real ones, or the testing kit's.
    var desktopLaunchers: DesktopLaunchers.Maker

    /// The daemon's own: a thread each, Argon2id, the system clock and its environment.
    package static func threads() -> DaemonWorkers {
        let files = WorkQueue.thread("launchservicesd.files")
        let desktop = WorkQueue.thread("launchservicesd.desktop-entries")
        return DaemonWorkers(files: files, passwords: .thread("launchservicesd.passwords"),
                             pasteboardSaves: .thread("launchservicesd.pasteboard-store"), hasher: Argon2idHasher(),
                             wallClock: { RegistryStore.millisecondsNow() },
                             folderWatcher: { onChange in files.dispatchQueue.flatMap { FolderWatcher(queue: $0, onChange: onChange) } },
                             desktopReads: desktop,
                             desktopWatcher: { onChange in
                                 desktop.dispatchQueue.flatMap { FolderWatcher(queue: $0, subfolders: false, relevant: DesktopWatch.isRelevant, onChange: onChange) }
                             },
                             environment: ProcessInfo.processInfo.environment,
                             desktopLaunchers: DesktopLaunchers.real(environment: ProcessInfo.processInfo.environment))
    }

    /// Everything on `loop`, hashing with `hasher` (Argon2id unless given); the wall clock
    /// starts at `wallClockStart` and moves only with the loop's clock; `folderWatcher` and
    /// `desktopWatcher` make the apps folders' and the desktop folders' watchers (none unless
    /// given); the desktop layout is read with `environment` (none: give private XDG folders).
    package static func onLoop(_ loop: EventLoop, hasher: (any PasswordHasher)? = nil, wallClockStart: Int64,
                               folderWatcher: @escaping FolderWatching.Maker = { _ in nil },
                               desktopWatcher: @escaping FolderWatching.Maker = { _ in nil },
                               environment: [String: String] = [:],
                               desktopLaunchers: @escaping DesktopLaunchers.Maker = { _, _, _, _, _ in DesktopLaunchers(launcher: UnstartedDesktopLauncher(), activator: nil) })
        -> DaemonWorkers {
        DaemonWorkers(files: .onLoop(loop), passwords: .onLoop(loop), pasteboardSaves: .onLoop(loop), hasher: hasher ?? Argon2idHasher(),
                      wallClock: { wallClockStart + Int64(loop.now.uptimeNanoseconds / 1_000_000) }, folderWatcher: folderWatcher,
                      desktopReads: .onLoop(loop), desktopWatcher: desktopWatcher, environment: environment, desktopLaunchers: desktopLaunchers)
    }
}

/// What watches the apps folders (or the desktop folders) and calls back when anything in
/// them changed: inotify (`FolderWatcher`) in the daemon, one the test triggers in the
/// testing kit.
package protocol FolderWatching: Sendable {
    typealias Maker = @Sendable (_ onChange: @escaping @Sendable () -> Void) -> (any FolderWatching)?
    /// Watches `folders` (again: a rescan calls it with the folders as they are now).
    func watch(_ folders: [String])
    func cancel()
}

extension FolderWatcher: FolderWatching {}

extension WorkQueue {
    /// Work handed to `submit`, which runs it when it likes: a test that holds a read back
    /// to see what happens meanwhile.
    init(label: String, submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.init(dispatchQueue: nil, label: label, submit: submit)
    }
}
