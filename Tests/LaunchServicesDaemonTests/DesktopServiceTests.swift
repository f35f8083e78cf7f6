import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

/// The desktop-entries room on an embedded loop, its reads held back on a worker the test
/// runs by hand and its watch triggered by the test: when the first read lets the waiting
/// go, how changes become reads, what is logged, what survives a read that cannot read
/// everything, and the stop. Real files in private XDG folders, read by the real reader.
@Suite("DesktopService: the desktop-entries room")
struct DesktopServiceTests {
    @Test("the first read runs on the worker: until it is in, bodies wait; then they run in order, and later ones at once")
    func firstRead() throws {
        try with { room in
            try room.entry("mail.desktop", scheme: "mailto")
            var ran: [Int] = []
            room.service.start()
            try room.service.whenReady { ran.append(1) }
            try room.service.whenReady { ran.append(2) }
            room.loop.run()
            #expect(!room.service.isReady)
            #expect(ran.isEmpty)
            #expect(room.held.count == 1, "the read waits on the worker, not on the loop")
            #expect(room.service.chosen(forScheme: "mailto") == nil)
            room.finishReads()
            #expect(room.service.isReady)
            #expect(ran == [1, 2])
            #expect(room.service.generation == 1)
            #expect(room.service.chosen(forScheme: "MailTo")?.id == "mail.desktop")
            #expect(room.service.choice(forScheme: "mailto").chosenID == "mail.desktop")
            #expect(room.service.handlers.layout.folders.count == 4)
            try room.service.whenReady { ran.append(3) }
            #expect(ran == [1, 2, 3])
            #expect(room.changes.isEmpty, "the first read is no change: whenReady says it is in")
            #expect(room.log.contains("info: desktop entries read: 1 entries in 4 folders, 1 schemes handled"))
            #expect(room.log.filter { $0.hasPrefix("notice: desktop handler") }.isEmpty)
        }
    }

    @Test("past maximumWaiting, whenReady is refused by name and the body never runs")
    func waitingLimit() throws {
        try with(maximumWaiting: 2) { room in
            room.service.start()
            var ran = 0
            try room.service.whenReady { ran += 1 }
            try room.service.whenReady { ran += 1 }
            #expect(throws: DesktopWaitRefused(limit: 2)) { try room.service.whenReady { ran += 100 } }
            #expect(DesktopWaitRefused(limit: 2).description == "2 requests already wait for the daemon's first read of the desktop entries; try again in a moment")
            room.finishReads()
            #expect(ran == 2)
        }
    }

    @Test("a first read slower than firstReadWait: the waiting go ahead without it, warned; when it lands, changed names every scheme")
    func slowFirstRead() throws {
        try with { room in
            try room.entry("mail.desktop", scheme: "mailto")
            try room.entry("web.desktop", scheme: "https")
            room.service.start()
            var ran = false
            try room.service.whenReady { ran = true }
            room.advance(by: .seconds(9))
            #expect(!ran)
            room.advance(by: .seconds(1))
            #expect(ran)
            #expect(room.service.isReady)
            #expect(room.service.generation == 0)
            #expect(room.service.chosen(forScheme: "mailto") == nil)
            #expect(room.log.contains("warning: the first read of the desktop entries has taken more than 10 s: 1 opens waiting for it go ahead without desktop handlers, which count from when it ends"))
            room.finishReads()
            #expect(room.service.generation == 1)
            #expect(room.service.chosen(forScheme: "mailto")?.id == "mail.desktop")
            #expect(room.changes == [["https", "mailto"]])
        }
    }

    @Test("enabled false: ready at once with no handlers; nothing read, nothing watched, ever")
    func disabled() throws {
        var settings = DesktopEntrySettings()
        settings.enabled = false
        try with(settings: settings) { room in
            try room.entry("mail.desktop", scheme: "mailto")
            var ran = false
            try room.service.whenReady { ran = true }
            #expect(!ran, "not before the start")
            room.service.start()
            #expect(ran)
            #expect(room.service.isReady)
            room.service.readAgainNow()
            room.finishReads()
            room.advance(by: .seconds(60))
            #expect(room.reads.withLockedValue { $0 } == 0)
            #expect(room.watcher == nil)
            #expect(room.service.chosen(forScheme: "mailto") == nil)
            #expect(room.service.generation == 0)
            #expect(room.log == ["info: desktop entries are not read (desktopEntries.enabled is false): only apps registered with launchservicesd are handlers"])
            let status = room.service.statusSummary
            #expect(!status.enabled && status.ready && status.entries == 0 && status.folders.isEmpty && status.foldersWatched == 0)
        }
    }

    @Test("watch false: read at start, no watcher")
    func unwatched() throws {
        var settings = DesktopEntrySettings()
        settings.watch = false
        try with(settings: settings) { room in
            room.service.start()
            room.finishReads()
            #expect(room.service.generation == 1)
            #expect(room.watcher == nil)
            #expect(room.service.statusSummary.foldersWatched == 0)
        }
    }

    @Test("the watch covers the configuration and applications folders before the read, then every folder the read reports")
    func watchedFolders() throws {
        try with { room in
            try room.entry("vendor/mail.desktop", scheme: "mailto")
            room.service.start()
            let top = [room.root + "/home/.config", room.root + "/etc", room.root + "/data/applications", room.root + "/sys/applications"]
            #expect(room.watcher?.folders.withLockedValue { $0 } == [top], "armed before the read runs")
            room.finishReads()
            #expect(room.watcher?.folders.withLockedValue { $0 }.last
                    == [room.root + "/home/.config", room.root + "/etc", room.root + "/data/applications", room.root + "/data/applications/vendor", room.root + "/sys/applications"])
            #expect(room.service.statusSummary.foldersWatched == 5)
            #expect(room.service.statusSummary.folders == top)
        }
    }

    @Test("a burst of changes is one read 200 ms after the first; a change during a read makes exactly one more, 200 ms after it")
    func coalescing() throws {
        try with { room in
            room.service.start()
            room.finishReads()
            let watcher = try #require(room.watcher)
            watcher.onChange()
            watcher.onChange()
            room.loop.run()
            room.advance(by: .milliseconds(150))
            watcher.onChange()
            room.loop.run()
            #expect(room.held.count == 0)
            room.advance(by: .milliseconds(50))
            #expect(room.held.count == 1, "one read for the three changes")
            // Changes while that read runs: one more read, once it is in.
            watcher.onChange()
            room.loop.run()
            room.advance(by: .milliseconds(200))
            room.service.readAgainNow()
            #expect(room.held.count == 1, "a read at a time")
            #expect(room.held.run() == 1)
            room.loop.run()
            #expect(room.service.generation == 2)
            #expect(room.held.count == 0, "not back to back")
            room.advance(by: .milliseconds(199))
            #expect(room.held.count == 0)
            room.advance(by: .milliseconds(1))
            #expect(room.held.count == 1, "the read asked for meanwhile, 200 ms after the one under way")
            room.finishReads()
            #expect(room.service.generation == 3)
            room.advance(by: .seconds(1))
            #expect(room.held.count == 0)
            #expect(room.reads.withLockedValue { $0 } == 3)
        }
    }

    @Test("a read that moves schemes logs each at notice with the line that moved it and tells changed; a read that moves nothing tells nothing")
    func moves() throws {
        try with { room in
            try room.entry("thunderbird.desktop", scheme: "mailto")
            try room.entry("org.example.Mail.desktop", scheme: "mailto")
            try room.mimeapps("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n")
            room.service.start()
            room.finishReads()
            #expect(room.service.chosen(forScheme: "mailto")?.id == "thunderbird.desktop")
            try room.mimeapps("# the user's\n\n[Default Applications]\nx-scheme-handler/irc=org.example.Mail.desktop\nx-scheme-handler/mailto=org.example.Mail.desktop\n")
            room.watcher?.onChange()
            room.loop.run()
            room.advance(by: .milliseconds(200))
            room.finishReads()
            #expect(room.service.chosen(forScheme: "mailto")?.id == "org.example.Mail.desktop")
            #expect(room.service.generation == 2)
            #expect(room.changes == [["irc", "mailto"]])
            // A default need not be associated (GLib's rule): irc is now handled too.
            #expect(room.log.filter { $0.hasPrefix("notice: desktop handler") }
                    == ["notice: desktop handler for 'irc' is now org.example.Mail.desktop (was none): ~/.config/mimeapps.list:4 [Default Applications]",
                        "notice: desktop handler for 'mailto' is now org.example.Mail.desktop (was thunderbird.desktop): ~/.config/mimeapps.list:5 [Default Applications]"])
            #expect(room.log.contains("info: desktop entries read again: 2 entries in 4 folders, 2 schemes handled, 2 moved"))
            // Nothing moves: nothing told, nothing logged.
            room.service.readAgainNow()
            room.finishReads()
            #expect(room.service.generation == 3)
            #expect(room.changes == [["irc", "mailto"]])
            // An entry gone: the scheme handled by none, with why the old one lost.
            try FileManager.default.removeItem(atPath: room.root + "/data/applications/org.example.Mail.desktop")
            try FileManager.default.removeItem(atPath: room.root + "/data/applications/thunderbird.desktop")
            try room.entry("thunderbird.desktop", scheme: "news")
            room.service.readAgainNow()
            room.finishReads()
            #expect(room.changes == [["irc", "mailto"], ["irc", "mailto", "news"]])
            #expect(room.log.filter { $0.hasPrefix("notice: desktop handler") }.dropFirst(2)
                    == ["notice: desktop handler for 'irc' is now none (was org.example.Mail.desktop): org.example.Mail.desktop: lost: no data folder has this desktop file (~/.config/mimeapps.list:4 [Default Applications])",
                        "notice: desktop handler for 'mailto' is now none (was org.example.Mail.desktop): org.example.Mail.desktop: lost: no data folder has this desktop file (~/.config/mimeapps.list:5 [Default Applications])",
                        "notice: desktop handler for 'news' is now thunderbird.desktop (was none): \(room.root)/data/applications/thunderbird.desktop:5 MimeType"])
        }
    }

    @Test("a note is logged once while it stays, and again if it comes back")
    func notesOnce() throws {
        try with { room in
            try writeFile("not a key file\n", to: room.root + "/data/applications/broken.desktop")
            room.service.start()
            room.finishReads()
            room.service.readAgainNow()
            room.finishReads()
            let notes = { room.log.filter { $0.hasPrefix("notice: desktop entries: ") && $0.contains("broken.desktop") } }
            #expect(notes().count == 1, "\(room.log)")
            try FileManager.default.removeItem(atPath: room.root + "/data/applications/broken.desktop")
            room.service.readAgainNow()
            room.finishReads()
            try writeFile("not a key file\n", to: room.root + "/data/applications/broken.desktop")
            room.service.readAgainNow()
            room.finishReads()
            #expect(notes().count == 2)
            #expect(room.service.statusSummary.problems.count == 1)
        }
    }

    @Test("what cannot be read now keeps what was read before, is warned once, and is read again after 1, 2, 4 s; a read in full says so and stops")
    func unreadable() throws {
        try with { room in
            try room.entry("mail.desktop", scheme: "mailto")
            room.service.start()
            room.finishReads()
            #expect(room.service.chosen(forScheme: "mailto")?.id == "mail.desktop")
            room.busy.withLockedValue { $0 = true }
            room.service.readAgainNow()
            room.finishReads()
            #expect(room.service.chosen(forScheme: "mailto")?.id == "mail.desktop", "kept: an unreadable folder is no evidence that it left")
            #expect(room.changes.isEmpty)
            let warning = "warning: desktop entries folder \(room.root)/data/applications could not be read (Too many open files): what was read from it before is kept; read again in 1 s or at the next change"
            #expect(room.log.filter { $0.hasPrefix("warning:") } == [warning])
            #expect(room.service.statusSummary.problems == ["desktop entries folder \(room.root)/data/applications could not be read (Too many open files)"])
            // The retries: 1 s, then 2 s, then 4 s; warned only once.
            room.advance(by: .milliseconds(999))
            #expect(room.held.count == 0)
            room.advance(by: .milliseconds(1))
            #expect(room.held.count == 1)
            room.finishReads()
            room.advance(by: .seconds(2))
            #expect(room.held.count == 1)
            room.finishReads()
            room.advance(by: .seconds(3))
            #expect(room.held.count == 0)
            room.advance(by: .seconds(1))
            #expect(room.held.count == 1)
            room.busy.withLockedValue { $0 = false }
            room.finishReads()
            #expect(room.log.filter { $0.hasPrefix("warning:") } == [warning])
            #expect(room.log.last == "notice: desktop entries read in full again; what could not be read before is up to date")
            #expect(room.service.statusSummary.problems.isEmpty)
            room.advance(by: .seconds(120))
            #expect(room.held.count == 0, "no more retries")
            #expect(room.service.generation == 5)
        }
    }

    @Test("unreadable at the first read: nothing from there counts until it can be read")
    func unreadableAtStart() throws {
        try with { room in
            try room.entry("mail.desktop", scheme: "mailto")
            room.busy.withLockedValue { $0 = true }
            room.service.start()
            room.finishReads()
            #expect(room.service.isReady)
            #expect(room.service.chosen(forScheme: "mailto") == nil)
            #expect(room.log.contains("warning: desktop entries folder \(room.root)/data/applications could not be read (Too many open files): nothing in it counts until it can be read; read again in 1 s or at the next change"))
            room.busy.withLockedValue { $0 = false }
            room.advance(by: .seconds(1))
            room.finishReads()
            #expect(room.service.chosen(forScheme: "mailto")?.id == "mail.desktop")
            #expect(room.changes == [["mailto"]])
        }
    }

    @Test("the stop cancels the watch; a read that comes back is dropped; bodies waiting are dropped; changes, retries and reads do nothing")
    func stop() throws {
        try with { room in
            try room.entry("mail.desktop", scheme: "mailto")
            room.busy.withLockedValue { $0 = true }
            room.service.start()
            var ran = false
            try room.service.whenReady { ran = true }
            room.service.stop()
            #expect(room.watcher?.cancelled.withLockedValue { $0 } == true)
            room.finishReads()
            #expect(room.service.generation == 0)
            #expect(!ran)
            room.watcher?.onChange()
            room.service.readAgainNow()
            room.advance(by: .seconds(120))
            #expect(room.held.count == 0)
            #expect(room.service.statusSummary.foldersWatched == 0)
            var after = false
            try room.service.whenReady { after = true }
            #expect(after, "after the stop, at once: nothing will come")
        }
    }

    @Test("the status: entries, schemes, folders, the last read's time, problems bounded")
    func status() throws {
        try with { room in
            try room.entry("mail.desktop", scheme: "mailto")
            for index in 0..<25 { try writeFile("broken\n", to: room.root + "/sys/applications/broken\(index).desktop") }
            room.service.start()
            #expect(room.service.statusSummary.lastRead == nil)
            #expect(!room.service.statusSummary.ready)
            room.finishReads()
            let status = room.service.statusSummary
            #expect(status.enabled && status.ready)
            #expect(status.entries == 26)
            #expect(status.schemesHandled == 1)
            #expect(status.generation == 1)
            #expect(status.lastRead == "2023-11-14T22:13:20.000Z")
            #expect(status.problems.count == DesktopEntriesStatus.maximumProblems)
            #expect(status.moreProblems == 5)
        }
    }
}
