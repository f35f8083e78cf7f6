import Foundation
import LaunchServicesCore
import LaunchServicesTesting
import Testing

/// The in-process daemon reads desktop entries from the environment the test gives it, on its
/// loop (done once it has settled), and watches them with a watcher the test triggers: the
/// desktop-entries room is tested deterministically, with real files and the real reader.
@Suite struct InProcessDesktopEntriesTests {
    /// Private XDG folders under `root`, with `prog` on PATH.
    static func environment(_ root: String) throws -> [String: String] {
        try writeFile("#!/bin/sh\n", to: root + "/bin/prog")
        #expect(chmod(root + "/bin/prog", 0o755) == 0)
        return ["HOME": root + "/home", "XDG_CONFIG_HOME": root + "/home/.config", "XDG_CONFIG_DIRS": root + "/etc",
                "XDG_DATA_HOME": root + "/home/.local/share", "XDG_DATA_DIRS": root + "/usr/share", "PATH": root + "/bin"]
    }

    static func entry(_ scheme: String) -> String {
        "[Desktop Entry]\nType=Application\nName=x\nExec=prog %u\nMimeType=x-scheme-handler/\(scheme);\n"
    }

    /// An in-process daemon that reads desktop entries with `environment`.
    static func daemon(_ environment: [String: String], apps: [AppBundle] = []) -> InProcessDaemon {
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.desktopEntries.enabled = true
        return InProcessDaemon(configuration: configuration, apps: apps, desktopEnvironment: environment)
    }

    @Test func theFirstReadIsInOnceTheDaemonHasSettled() throws {
        try TemporaryFolder.with(prefix: "ls-kit-desktop") { root in
            let environment = try Self.environment(root)
            try writeFile(Self.entry("mailto"), to: root + "/usr/share/applications/mail.desktop")
            let daemon = Self.daemon(environment, apps: [.simulated("com.example.notes", schemes: ["notes"])])
            #expect(!daemon.desktopEntries.isReady)
            #expect(daemon.desktopHandler(forScheme: "mailto") == nil)
            let client = daemon.connect()
            #expect(client.open("notes://today")?.opened == true)
            #expect(daemon.desktopEntries.isReady)
            #expect(daemon.desktopHandler(forScheme: "mailto") == "mail.desktop")
            #expect(daemon.desktopEntries.generation == 1)
            #expect(daemon.desktopWatchedFolders == [root + "/home/.config", root + "/etc", root + "/home/.local/share/applications", root + "/usr/share/applications"])
        }
    }

    @Test func theRegistryKeepsWhenTheDesktopSideFirstHandledEachScheme() throws {
        try TemporaryFolder.with(prefix: "ls-kit-desktop") { root in
            try writeFile(Self.entry("mailto"), to: root + "/usr/share/applications/mail.desktop")
            let daemon = Self.daemon(try Self.environment(root))
            daemon.settle()
            let first = try daemon.desktopClaim(on: "mailto")
            #expect(first != nil, "the first read's schemes are claimed")
            #expect(try daemon.desktopClaim(on: "irc") == nil)
            daemon.advance(by: .seconds(5))
            try writeFile(Self.entry("irc"), to: root + "/home/.local/share/applications/irc.desktop")
            daemon.desktopFoldersChanged()
            daemon.advance(by: .milliseconds(200))
            let irc = try daemon.desktopClaim(on: "irc")
            #expect(irc != nil && first != nil && irc! > first!, "a scheme handled later claims later")
            #expect(try daemon.desktopClaim(on: "mailto") == first, "a scheme still handled keeps its first time")
            #expect(FileManager.default.fileExists(atPath: root + "/usr/share/applications/mail.desktop"))
            try FileManager.default.removeItem(atPath: root + "/usr/share/applications/mail.desktop")
            daemon.desktopFoldersChanged()
            daemon.advance(by: .milliseconds(200))
            #expect(try daemon.desktopClaim(on: "mailto") == nil, "a scheme no desktop entry handles any more is forgotten")
        }
    }

    @Test func anEntryAddedIsReadAfterTheWatchReportsIt() throws {
        try TemporaryFolder.with(prefix: "ls-kit-desktop") { root in
            let daemon = Self.daemon(try Self.environment(root))
            daemon.settle()
            #expect(daemon.desktopHandler(forScheme: "irc") == nil)
            try writeFile(Self.entry("irc"), to: root + "/home/.local/share/applications/chat/irc.desktop")
            daemon.desktopFoldersChanged()
            daemon.advance(by: .milliseconds(100))
            #expect(daemon.desktopHandler(forScheme: "irc") == nil, "read 200 ms after the change")
            daemon.advance(by: .milliseconds(100))
            #expect(daemon.desktopHandler(forScheme: "irc") == "chat-irc.desktop")
            #expect(daemon.log.contains("notice: desktop handler for 'irc' is now chat-irc.desktop (was none): ~/.local/share/applications/chat/irc.desktop:5 MimeType"))
            #expect(daemon.desktopWatchedFolders.contains(root + "/home/.local/share/applications/chat"))
        }
    }

    @Test func desktopEntriesAreOffByDefaultInTheKit() throws {
        try TemporaryFolder.with(prefix: "ls-kit-desktop") { root in
            let environment = try Self.environment(root)
            try writeFile(Self.entry("mailto"), to: root + "/usr/share/applications/mail.desktop")
            let daemon = InProcessDaemon(desktopEnvironment: environment)
            #expect(daemon.desktopEntries.isReady)
            daemon.settle()
            #expect(daemon.desktopHandler(forScheme: "mailto") == nil)
            #expect(daemon.desktopWatchedFolders.isEmpty)
        }
    }

    @Test func theStopCancelsTheWatch() throws {
        try TemporaryFolder.with(prefix: "ls-kit-desktop") { root in
            let daemon = Self.daemon(try Self.environment(root))
            daemon.settle()
            #expect(!daemon.desktopWatchedFolders.isEmpty)
            #expect(daemon.shutdown())
            #expect(daemon.desktopWatchedFolders.isEmpty)
            try writeFile(Self.entry("irc"), to: root + "/usr/share/applications/irc.desktop")
            daemon.desktopFoldersChanged()
            daemon.advance(by: .seconds(1))
            #expect(daemon.desktopHandler(forScheme: "irc") == nil)
            #expect(daemon.desktopEntries.generation == 1)
        }
    }
}
