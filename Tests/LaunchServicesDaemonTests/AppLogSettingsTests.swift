import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `appLogs` in the configuration file, and the rotating log file the daemon writes.
@Suite("App log settings and files")
struct AppLogSettingsTests {
    func load(_ json: String) throws -> DaemonConfiguration { try ConfigurationText.load(json) }
    func problem(_ json: String) throws -> String? { try ConfigurationText.problem(json) }

    @Test("defaults: auto, 1 MiB; a file sets either key")
    func keys() throws {
        #expect(DaemonConfiguration().appLogs.maximumBytes == 1 << 20)
        #expect(DaemonConfiguration().appLogs.destination == "auto")
        let c = try load(#"{"appLogs": {"maximumBytes": 4096, "destination": "files"}}"#)
        #expect(c.appLogs.maximumBytes == 4096)
        #expect(c.appLogs.destination == "files")
    }

    @Test("out-of-range sizes, unknown destinations and unknown keys are refused, named")
    func refusals() throws {
        #expect(try problem(#"{"appLogs": {"maximumBytes": 100}}"#) == "appLogs.maximumBytes is 100; give 1024 to 1073741824")
        #expect(try problem(#"{"appLogs": {"maximumBytes": 2048.5}}"#) == "key 'appLogs.maximumBytes' is 2048.5; give a whole number")
        #expect(try problem(#"{"appLogs": {"destination": "syslog"}}"#) == "appLogs.destination is 'syslog'; give 'auto' or 'files'")
        #expect(try problem(#"{"appLogs": {"maxBytes": 4096}}"#) == "has unknown key 'appLogs.maxBytes'; known: destination, maximumBytes")
    }

    @Test("destination files: the log folder under the state folder, whatever the environment")
    func filesDestination() {
        var settings = AppLogSettings()
        settings.destination = "files"
        #expect(AppOutput.choose(settings, stateFolder: "/s") == .files(folder: "/s/logs", maximumBytes: 1 << 20))
        #expect(AppOutput.files(folder: "/s/logs", maximumBytes: 1).report == "/s/logs")
        #expect(AppOutput.journal.report == "journal")
    }

    @Test("a write that would pass the limit rotates first: neither file exceeds it")
    func rotation() throws {
        let (rotated, current) = try TemporaryFolder.with { root throws -> (String, String) in
            let file = AppLogFile(path: root + "/logs/a.log", maximumBytes: 10)
            for text in ["12345\n", "6789\n", "abcd\n"] {
                Array(text.utf8).withUnsafeBytes { file.write($0) }
            }
            file.close()
            return (try String(contentsOfFile: root + "/logs/a.log.1", encoding: .utf8), try String(contentsOfFile: root + "/logs/a.log", encoding: .utf8))
        }
        #expect(rotated == "12345\n")
        #expect(current == "6789\nabcd\n")
    }

    @Test("bundle ids that could leave the log folder get no file")
    func unsafeNames() {
        #expect(AppLogFile.isSafeName("com.acme.todolist"))
        for id in ["", ".", "..", "a/b", "../x", "a\0b"] { #expect(!AppLogFile.isSafeName(id)) }
    }

    /// Waits (at most 10 s) for `condition`.
    private func eventually(_ what: String, _ condition: () -> Bool) throws {
        let by = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < by else { throw AppLogFailure("\(what) did not happen within 10 s") }
            usleep(2_000)
        }
    }

    @Test("a log pipe made ahead of its app's launch: named at the launch, what the app writes reaches ID.log; one discarded, or refused for an unsafe name, ends its drain")
    func pipeMadeAhead() throws {
        try TemporaryFolder.with { root throws in
            let output = AppOutput.files(folder: root + "/logs", maximumBytes: 1 << 20)
            let ahead = try #require(output.prepareAhead())
            #expect(ahead.stdout == ahead.stderr)
            let named = try #require(output.prepare(bundleID: "com.acme.a", ahead: ahead))
            #expect(named.stdout == ahead.stdout, "the launch made a pipe of its own instead of the one made ahead")
            // The app's line, then its end: the drain (not heard yet) still takes all at the hang-up.
            let line = Array("launched\n".utf8)
            #expect(line.withUnsafeBytes { write(named.stdout, $0.baseAddress, $0.count) } == line.count)
            let drain = try #require(named.spawned(true))
            drain.hear()
            try eventually("the line in com.acme.a.log") {
                (try? String(contentsOfFile: root + "/logs/com.acme.a.log", encoding: .utf8)) == "launched\n"
            }

            // Discarded (the daemon stopping): its write end closed, the drain ends at the end
            // of file that makes (a write end left open would keep it registered for ever).
            let unused = try #require(output.prepareAhead())
            let unusedDrain = try #require(unused.drain)
            unused.discard()
            try eventually("the discarded pipe's drain to end") { !AppWatchThread.shared.isRegistered(unusedDrain) }
            // An unsafe name gets no file: the pipe made ahead is discarded, not handed on.
            let refused = try #require(output.prepareAhead())
            let refusedDrain = try #require(refused.drain)
            #expect(output.prepare(bundleID: "../x", ahead: refused) == nil)
            try eventually("the refused pipe's drain to end") { !AppWatchThread.shared.isRegistered(refusedDrain) }
            let files = try FileManager.default.contentsOfDirectory(atPath: root + "/logs")
            #expect(files == ["com.acme.a.log"], "files in the log folder: \(files)")
        }
    }
}

struct AppLogFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
