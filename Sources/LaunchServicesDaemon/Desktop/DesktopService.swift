import Foundation
import LaunchServicesCore
import Logging
import NIOCore

/// The desktop-entries room: owns the user's desktop layout as last read and the choice it
/// gives (`DesktopHandlers`), reads it off the loop, watches its folders and reads it again on
/// change. Confined to the loop, like every room.
///
/// The first read starts with the daemon (`start`) and runs on `worker`, never on the loop:
/// the daemon answers before it is done (a layout of thousands of entries takes a while), and
/// whoever needs desktop handlers before then waits for it (`whenReady`), a bounded wait: a
/// limited waiting list, and a deadline after which the waiting go ahead without them.
///
/// A change the watch reports becomes one read 200 ms later (a burst of writes, such as a
/// package installing, becomes one read), one read at a time (a change during a read makes one
/// more, 200 ms after it). Each applied read bumps `generation`; every scheme whose chosen entry moved
/// is logged at notice with the line that moved it, and told to `changed`. A folder, entry or
/// association file that cannot be read now keeps what the last read found there
/// (`DesktopLayout.carryingOver`), is logged, and the layout is read again after 1 s, then 2,
/// 4, … up to every minute, until it can be.
package final class DesktopService {
    /// What one read gives, ready to take in on the loop.
    struct Read: Sendable {
        var handlers: DesktopHandlers
        var choices: DesktopSchemeChoices
        var foldersRead: [String]
        var unreadable: [DesktopUnreadable]
    }

    /// Reads the layout for an environment and a home folder (blocking: on the worker).
    typealias LayoutRead = @Sendable (_ environment: [String: String], _ home: String) -> DesktopLayoutReader.Result

    static let firstRetryDelay: Int64 = 1
    static let longestRetryDelay: Int64 = 60
    /// A burst of file events becomes one read this long after the first.
    static let coalescing: TimeAmount = .milliseconds(200)

    let settings: DesktopEntrySettings
    let environment: [String: String]
    let home: String
    let loop: EventLoop
    let logger: Logger
    private let worker: WorkQueue
    private let makeWatcher: FolderWatching.Maker
    private let wallClock: @Sendable () -> Int64
    private let readLayout: LayoutRead
    /// Bodies that may wait for the first read, at most (`whenReady`).
    let maximumWaiting: Int
    /// How long the waiting wait for the first read before they go ahead without it.
    let firstReadWait: TimeAmount

    /// The layout as last read, and the choice it gives; empty until the first read is in.
    package private(set) var handlers: DesktopHandlers
    /// Every mentioned scheme's chosen entry in `handlers`, for one-lookup answers.
    private(set) var choices = DesktopSchemeChoices()
    /// Whether the first read is in, or was waited for as long as allowed, or reading is off.
    package private(set) var isReady = false
    /// Reads applied so far (0: none yet).
    package private(set) var generation = 0
    package private(set) var isStopped = false
    /// Called on the loop after a read that moved schemes (not after the first: see
    /// `whenReady`), with the schemes that moved, ASCII-lowercased and sorted.
    package var changed: (([String]) -> Void)?

    private var started = false
    private var waiting: [() -> Void] = []
    private var reading = false
    private var readAgain = false
    private var pendingRead: Scheduled<Void>?
    private var pendingRetry: Scheduled<Void>?
    private var firstReadDeadline: Scheduled<Void>?
    private var retryDelay = DesktopService.firstRetryDelay
    private var watcher: (any FolderWatching)?
    /// The folders given to the watcher last.
    private(set) var foldersWatched: [String] = []
    /// What the last read could not read now.
    private(set) var unreadable: [DesktopUnreadable] = []
    /// The last read's notes, each logged once while it stays.
    private var notes: Set<String> = []
    /// When the last read was applied (wall clock, milliseconds since the Unix epoch).
    private(set) var lastReadAt: Int64?

    init(settings: DesktopEntrySettings, environment: [String: String], home: String, loop: EventLoop, logger: Logger, worker: WorkQueue,
         makeWatcher: @escaping FolderWatching.Maker, wallClock: @escaping @Sendable () -> Int64, maximumWaiting: Int = 4096,
         firstReadWait: TimeAmount = .seconds(10),
         readLayout: @escaping LayoutRead = { environment, home in DesktopLayoutReader().read(environment: environment, home: home) }) {
        self.settings = settings
        self.environment = environment
        self.home = home
        self.loop = loop
        self.logger = logger
        self.worker = worker
        self.makeWatcher = makeWatcher
        self.wallClock = wallClock
        self.maximumWaiting = maximumWaiting
        self.firstReadWait = firstReadWait
        self.readLayout = readLayout
        handlers = DesktopHandlers(layout: DesktopLayout(home: home, folders: []))
    }

    /// The folders the layout is read from, before any read: the configuration folders and
    /// the `applications` folders, in GLib's order.
    var folders: [String] {
        DesktopLayout.folders(of: XDGBaseDirectories(environment: environment, home: home)).map(\.path)
    }

    // MARK: What the rest of the daemon asks

    /// The entry chosen for `scheme` (any case), or nil: one lookup.
    package func chosen(forScheme scheme: String) -> DesktopCandidate? { choices.chosen(forScheme: scheme) }
    /// The same for a validated scheme: one dictionary lookup, nothing built (the open path).
    package func chosen(for scheme: URLScheme) -> DesktopCandidate? { choices.chosen(for: scheme) }

    /// The schemes some usable desktop entry handles now (those with a chosen entry).
    package var handledSchemes: Set<URLScheme> { Set(choices.chosen.keys.compactMap { try? URLScheme(validating: $0) }) }

    /// The choice for `scheme` with every candidate explained (`lsctl explain`).
    package func choice(forScheme scheme: String, comparingWithGLib: Bool = false) -> DesktopChoice {
        handlers.choice(forScheme: scheme, comparingWithGLib: comparingWithGLib)
    }

    /// Runs `body` on the loop once the first read is in: at once when it is (or reading is
    /// off, or the service stopped), else when it arrives or when `firstReadWait` has passed.
    /// Refused, named, when `maximumWaiting` bodies already wait. At the stop, bodies still
    /// waiting are dropped, not run: the stop closes every connection, so their callers hear
    /// that the daemon went away.
    package func whenReady(_ body: @escaping () -> Void) throws(DesktopWaitRefused) {
        loop.assertInEventLoop()
        if isReady || isStopped { return body() }
        guard waiting.count < maximumWaiting else { throw DesktopWaitRefused(limit: maximumWaiting) }
        waiting.append(body)
    }

    // MARK: Start and stop

    /// Starts the first read (and the watch), or, with `enabled` false, is ready at once with
    /// no handlers.
    package func start() {
        loop.assertInEventLoop()
        guard !started, !isStopped else { return }
        started = true
        guard settings.enabled else {
            logger.info("desktop entries are not read (desktopEntries.enabled is false): only apps registered with launchservicesd are handlers")
            becomeReady()
            return
        }
        // Armed before the read begins (on the same queue in the daemon), so a change made
        // while the first read runs is not missed.
        startWatching()
        let service = NIOLoopBound(self, eventLoop: loop)
        firstReadDeadline = loop.scheduleTask(in: firstReadWait) { service.value.stopWaitingForFirstRead() }
        read()
    }

    /// Stops watching and reading: a read that comes back later is dropped.
    package func stop() {
        isStopped = true
        watcher?.cancel()
        watcher = nil
        pendingRead?.cancel()
        pendingRetry?.cancel()
        firstReadDeadline?.cancel()
        pendingRead = nil
        pendingRetry = nil
        firstReadDeadline = nil
        waiting = []
    }

    /// Reads the layout again now (200 ms after the one under way, if there is one).
    package func readAgainNow() {
        loop.assertInEventLoop()
        guard started, settings.enabled, !isStopped else { return }
        pendingRead?.cancel()
        pendingRead = nil
        read()
    }

    // MARK: Reading

    private func startWatching() {
        guard settings.watch else { return }
        let loop = self.loop
        let service = NIOLoopBound(self, eventLoop: loop)
        watcher = makeWatcher {
            loop.execute { service.value.changeReported() }
        }
        if watcher == nil { logger.warning("desktop entries cannot be watched (no inotify): they are read at start only") }
        foldersWatched = folders
        watcher?.watch(foldersWatched)
    }

    /// A change in the folders: one read, `coalescing` later.
    func changeReported() {
        guard !isStopped, started, pendingRead == nil else { return }
        let service = NIOLoopBound(self, eventLoop: loop)
        pendingRead = loop.scheduleTask(in: Self.coalescing) {
            service.value.pendingRead = nil
            service.value.read()
        }
    }

    /// Reads on the worker, one read at a time, carrying over from the current layout what
    /// cannot be read now; the result is applied on the loop.
    private func read() {
        guard !isStopped else { return }
        guard !reading else {
            readAgain = true
            return
        }
        reading = true
        let previous = generation > 0 ? handlers.layout : nil
        let (environment, home, readLayout, loop) = (self.environment, self.home, self.readLayout, self.loop)
        let service = NIOLoopBound(self, eventLoop: loop)
        worker.async {
            let result = readLayout(environment, home)
            let layout = previous.map { result.layout.carryingOver(result.unreadable, from: $0) } ?? result.layout
            let handlers = DesktopHandlers(layout: layout)
            let read = Read(handlers: handlers, choices: DesktopSchemeChoices(handlers), foldersRead: result.foldersRead, unreadable: result.unreadable)
            loop.execute { service.value.apply(read) }
        }
    }

    /// Takes a read in: logs what moved and what is new among the notes and what could not
    /// be read, watches the folders it read, and reads again if a change came meanwhile.
    func apply(_ result: Read) {
        reading = false
        guard !isStopped else { return }
        let first = generation == 0
        let moves = first ? [] : choices.moves(to: result.choices)
        handlers = result.handlers
        choices = result.choices
        generation += 1
        lastReadAt = wallClock()
        let layout = result.handlers.layout
        for note in layout.notes where !notes.contains(note) {
            logger.notice("desktop entries: \(TerminalText.escapingControls(note))")
        }
        notes = Set(layout.notes)
        for move in moves {
            logger.notice("\(describe(move))", metadata: ["url_scheme": "\(TerminalText.escapingControls(move.scheme))"])
        }
        let entries = layout.folders.reduce(0) { $0 + $1.entries.count }
        logger.info("desktop entries \(first ? "read" : "read again"): \(entries) entries in \(layout.folders.count) folders, \(choices.chosen.count) schemes handled\(moves.isEmpty ? "" : ", \(moves.count) moved")\(result.unreadable.isEmpty ? "" : ", \(result.unreadable.count) could not be read")")
        noteUnreadable(result.unreadable, first: first)
        if let watcher {
            foldersWatched = result.foldersRead
            watcher.watch(foldersWatched)
        }
        if first {
            // Opens that went ahead without the read, at its deadline, see every scheme change.
            let wentAhead = isReady
            becomeReady()
            if wentAhead && !choices.chosen.isEmpty { changed?(choices.chosen.keys.sorted()) }
        } else if !moves.isEmpty {
            changed?(moves.map(\.scheme))
        }
        if readAgain {
            // Not at once: a folder written to without pause is read at most once per
            // read and coalescing delay, not back to back.
            readAgain = false
            changeReported()
        }
    }

    /// The move's line, and for a scheme no entry handles any more, why the old one lost.
    private func describe(_ move: DesktopHandlerMove) -> String {
        guard move.after == nil, let before = move.before,
              let lost = handlers.choice(forScheme: move.scheme).candidates.first(where: { $0.id == before.id }) else { return move.description }
        return move.description + ": " + lost.description
    }

    private func becomeReady() {
        isReady = true
        firstReadDeadline?.cancel()
        firstReadDeadline = nil
        let bodies = waiting
        waiting = []
        for body in bodies { body() }
    }

    /// The first read took longer than `firstReadWait`: those waiting go ahead without it.
    private func stopWaitingForFirstRead() {
        firstReadDeadline = nil
        guard !isReady, !isStopped else { return }
        logger.warning("the first read of the desktop entries has taken more than \(firstReadWait.nanoseconds / 1_000_000_000) s: \(waiting.count) opens waiting for it go ahead without desktop handlers, which count from when it ends")
        becomeReady()
    }

    // MARK: What could not be read

    /// Logs each place newly unreadable, and reads again later while any is; a read in full
    /// after one that was not says so and stops the retries.
    private func noteUnreadable(_ now: [DesktopUnreadable], first: Bool) {
        let before = Set(unreadable.map(\.description))
        unreadable = now
        guard !now.isEmpty else {
            pendingRetry?.cancel()
            pendingRetry = nil
            retryDelay = Self.firstRetryDelay
            if !before.isEmpty { logger.notice("desktop entries read in full again; what could not be read before is up to date") }
            return
        }
        let delay = scheduleRetry()
        let kept = first ? "nothing in it counts until it can be read" : "what was read from it before is kept"
        let when = "read again \(delay.map { "in \($0) s" } ?? "shortly")\(watcher == nil ? "" : " or at the next change")"
        for place in now where !before.contains(place.description) {
            logger.warning("\(place): \(kept); \(when)", metadata: ["desktop_path": "\(TerminalText.escapingControls(place.path))"])
        }
    }

    /// Schedules the next read after an incomplete one, unless one is due; returns its delay
    /// in seconds (nil when one was already due).
    private func scheduleRetry() -> Int64? {
        guard pendingRetry == nil, !isStopped else { return nil }
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
        let service = NIOLoopBound(self, eventLoop: loop)
        pendingRetry = loop.scheduleTask(in: .seconds(delay)) {
            service.value.pendingRetry = nil
            service.value.read()
        }
        return delay
    }
}

/// `whenReady` refused: too many already wait for the first read of the desktop entries.
package struct DesktopWaitRefused: Error, Equatable, CustomStringConvertible {
    package var limit: Int

    package var description: String {
        "\(limit) requests already wait for the daemon's first read of the desktop entries; try again in a moment"
    }
}
