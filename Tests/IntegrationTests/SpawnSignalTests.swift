import Foundation
import LaunchServicesTesting
import Testing

/// What a launched app inherits of the daemon's signal settings: nothing. The daemon ignores
/// SIGPIPE (NIO) and its stop signals (service-lifecycle), and the spawn resets only the
/// standard signals at every launch (the real-time ones as they were at its first), so this
/// checks the result in the app itself.
@Suite("Signals of a launched app")
struct SpawnSignalTests {
    /// `/proc/PID/status` `SigIgn` (or `SigBlk`) of `pid`, as hex, or nil when unreadable.
    private static func mask(_ name: String, in status: String) -> UInt64? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    @Test("a launched app starts with no signal ignored and none blocked, though the daemon ignores some")
    func defaultDispositions() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        // Meaningful only while the daemon does ignore signals an app would inherit.
        let daemonStatus = try String(contentsOfFile: "/proc/\(h.daemonPID)/status", encoding: .utf8)
        let ignoredByDaemon = try #require(Self.mask("SigIgn", in: daemonStatus))
        #expect(ignoredByDaemon & (1 << (UInt64(SIGPIPE) - 1)) != 0, "the daemon ignores SIGPIPE: \(String(ignoredByDaemon, radix: 16))")

        // The bundle's executable records its own masks (grep reads its own status, and
        // inherits what the shell inherited) and exits; the open ends as a crash in launch.
        let bundle = h.appsFolder + "/signals.app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try BundleFiles.infoPlist(id: "test.signals", executable: "signals", schemes: ["signals"]).write(toFile: bundle + "/Info.plist", atomically: true, encoding: .utf8)
        let record = bundle + "/recorded"
        try "#!/bin/sh\ngrep -E '^(SigIgn|SigBlk):' /proc/self/status > \"$LAUNCHSERVICES_BUNDLE_PATH/recorded.tmp\"\nmv \"$LAUNCHSERVICES_BUNDLE_PATH/recorded.tmp\" \"$LAUNCHSERVICES_BUNDLE_PATH/recorded\"\n"
            .write(toFile: bundle + "/signals", atomically: true, encoding: .utf8)
        #expect(chmod(bundle + "/signals", 0o755) == 0)
        #expect(try h.run("lsctl", ["rescan"]).status == 0)
        let opened = try h.lsopen("--json", "signals:x")
        #expect(opened.errorCode == "crashed", "\(opened.stdout) \(opened.stderr)")
        try h.eventually("the app recorded its signal masks") { FileManager.default.fileExists(atPath: record) }
        let recorded = try String(contentsOfFile: record, encoding: .utf8)
        #expect(Self.mask("SigIgn", in: recorded) == 0, "\(recorded)")
        #expect(Self.mask("SigBlk", in: recorded) == 0, "\(recorded)")
    }
}
