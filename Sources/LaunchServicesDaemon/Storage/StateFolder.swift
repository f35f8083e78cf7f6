import Dispatch
import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging

/// What a start finds in the state folder, read off the loop: the folder's lock (a second
/// daemon on it refuses, naming this one), the registry and the saved pasteboards, the
/// databases found damaged and set aside, and what cannot be kept.
struct OpenedStateFolder: Sendable {
    var lock: StateFolderLock?
    /// What the start read of the registry before serving (`RegistryService.start`)…
    var registry: RegistryService.Started
    /// …and the rest, when there was nothing more to read (no state folder); otherwise
    /// `RegistryService.finishLoading` reads it once the socket serves.
    var loadedRegistry: RegistryService.Loaded?
    var damaged: [DamagedDatabase]
    var problems: [String]
    var pasteboardStore: PasteboardStore?
    var savedPasteboards: [Pasteboard]
    var kept: [KeptDatabase]

    /// Takes the folder's lock, makes sure no daemon serves the socket yet (unless it was
    /// handed over by socket activation), then reads the databases and the apps folders.
    /// Nothing in the state folder is read or written before the lock, and nothing is
    /// scanned before the socket check. A damaged database is set aside and replaced
    /// (`DamagedDatabase`); a pasteboard database that cannot be used at all leaves the
    /// daemon serving without persistent pasteboards.
    static func open(_ stateFolder: String?, socketPath: String, activated: Bool, appsFolders: [String], logger: Logger) throws -> OpenedStateFolder {
        var lock: StateFolderLock?
        if let stateFolder {
            try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            lock = try StateFolderLock(folder: stateFolder, socket: socketPath)
        }
        if !activated { try SocketListener.refuseIfServed(socketPath) }
        let started = try RegistryService.start(stateFolder: stateFolder, folders: appsFolders)
        var opened = OpenedStateFolder(lock: lock, registry: started, loadedRegistry: started.store == nil ? try RegistryService.finish(started) : nil,
                                       damaged: [started.store?.damage].compactMap { $0 }, problems: [],
                                       pasteboardStore: nil, savedPasteboards: [], kept: [])
        if let stateFolder {
            do {
                let store = try PasteboardStore(folder: stateFolder)
                if let damage = store.damage { opened.damaged.append(damage) }
                opened.savedPasteboards = try store.load()
                opened.pasteboardStore = store
            } catch {
                opened.problems.append("persistent pasteboards are not kept until launchservicesd restarts with a usable file: \(error)")
            }
            // A listing, not a read of the kept files: cheap however large they are.
            opened.kept = KeptDatabases.list(in: stateFolder)
        }
        for damage in opened.damaged {
            logger.error("\(damage)", metadata: ["database": "\(damage.file)", "kept_as": "\(damage.keptAs)"])
        }
        for problem in opened.problems { logger.error("\(problem)") }
        return opened
    }
}

/// The state folder as it stands, for `lsctl status`: its lock (held for the daemon's
/// life), the databases set aside at this start, those kept in the folder now (kept true by
/// a watch until the user removes them), and what the daemon cannot keep. Confined to the loop.
final class StorageStatus {
    private var lock: StateFolderLock?
    /// Databases found damaged at this start and set aside.
    private(set) var damagedDatabases: [DamagedDatabase] = []
    /// The damaged databases kept in the state folder now, of this start or an earlier one.
    var keptDatabases: [KeptDatabase] = []
    /// What the daemon cannot keep (e.g. no persistent pasteboards: `pasteboard.sqlite`
    /// could not be opened).
    private(set) var problems: [String] = []
    var keptDatabaseWatch: KeptDatabaseWatch?

    func adopt(_ opened: OpenedStateFolder) {
        lock = opened.lock
        damagedDatabases = opened.damaged
        keptDatabases = opened.kept
        problems = opened.problems
    }

    /// The kept databases' report (`damagedDatabases` in `lsctl status`).
    var reports: [DamagedDatabaseReport]? { KeptDatabases.reports(kept: keptDatabases, setAsideNow: damagedDatabases) }

    /// The stop: the watch ends; the lock goes with the process.
    func stop() {
        keptDatabaseWatch?.cancel()
    }
}
