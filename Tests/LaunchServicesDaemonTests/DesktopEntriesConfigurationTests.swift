import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `desktopEntries` in the configuration file: reading and watching, and the launch settings.
@Suite("Desktop entries configuration")
struct DesktopEntriesConfigurationTests {
    func load(_ json: String) throws -> DaemonConfiguration { try ConfigurationText.load(json) }
    func problem(_ json: String) throws -> String? { try ConfigurationText.problem(json) }

    @Test("defaults: read, watched, and the launcher's own defaults")
    func defaults() throws {
        let settings = DaemonConfiguration().desktopEntries
        #expect(settings.enabled)
        #expect(settings.watch)
        #expect(settings.launch == DesktopLaunchSettings())
        #expect(try load("{}").desktopEntries == settings)
        #expect(try load(#"{"desktopEntries": {}}"#).desktopEntries == settings)
    }

    @Test("every key is read; the others keep their defaults")
    func everyKey() throws {
        let c = try load("""
            {"desktopEntries": {"enabled": false, "watch": false, "graceSeconds": 1.25, "stderrSettleSeconds": 3, "reportMarginSeconds": 60,
             "stderrTailLines": 0, "stderrTailBytes": 100, "scopes": false, "scopeTimeoutSeconds": 0.5, "maximumScopeRequestsWaiting": 1,
             "maximumRunning": 10000}}
            """)
        let d = c.desktopEntries
        #expect(!d.enabled)
        #expect(!d.watch)
        #expect(d.launch.grace == .milliseconds(1250))
        #expect(d.launch.stderrSettle == .seconds(3))
        #expect(d.launch.reportMargin == .seconds(60))
        #expect(d.launch.stderrTailLines == 0)
        #expect(d.launch.stderrTailBytes == 100)
        #expect(!d.launch.scopes)
        #expect(d.launch.scopeTimeout == .milliseconds(500))
        #expect(d.launch.maximumScopeRequestsWaiting == 1)
        #expect(d.launch.maximumRunning == 10000)
        // Not settable from the file: the scope names' parts.
        #expect(d.launch.scopeLauncher == DesktopLaunchSettings().scopeLauncher)
        #expect(d.launch.scopeSlice == DesktopLaunchSettings().scopeSlice)
        let one = try load(#"{"desktopEntries": {"watch": false}}"#).desktopEntries
        #expect(one.enabled && !one.watch && one.launch == DesktopLaunchSettings())
    }

    @Test("out-of-range values are refused, naming desktopEntries.KEY and the range", arguments: [
        (#"{"graceSeconds": 0}"#, "desktopEntries.graceSeconds is 0.0; give seconds between 0 and 60"),
        (#"{"graceSeconds": 61}"#, "desktopEntries.graceSeconds is 61.0; give seconds between 0 and 60"),
        (#"{"stderrSettleSeconds": -1}"#, "desktopEntries.stderrSettleSeconds is -1.0; give seconds between 0 and 60"),
        (#"{"reportMarginSeconds": 3600}"#, "desktopEntries.reportMarginSeconds is 3600.0; give seconds between 0 and 60"),
        (#"{"scopeTimeoutSeconds": 0}"#, "desktopEntries.scopeTimeoutSeconds is 0.0; give seconds between 0 and 60"),
        (#"{"stderrTailLines": -1}"#, "desktopEntries.stderrTailLines is -1; give 0 to 1000"),
        (#"{"stderrTailLines": 1001}"#, "desktopEntries.stderrTailLines is 1001; give 0 to 1000"),
        (#"{"stderrTailBytes": 65537}"#, "desktopEntries.stderrTailBytes is 65537; give 0 to 65536"),
        (#"{"maximumScopeRequestsWaiting": 0}"#, "desktopEntries.maximumScopeRequestsWaiting is 0; give 1 to 1024"),
        (#"{"maximumRunning": 0}"#, "desktopEntries.maximumRunning is 0; give 1 to 10000"),
        (#"{"maximumRunning": 10001}"#, "desktopEntries.maximumRunning is 10001; give 1 to 10000"),
    ])
    func outOfRange(section: String, refusal: String) throws {
        #expect(try problem(#"{"desktopEntries": \#(section)}"#) == refusal)
    }

    @Test("wrong types, fractions and unknown keys are refused, named")
    func badKeys() throws {
        #expect(try problem(#"{"desktopEntries": {"enabled": "no"}}"#)?.hasPrefix("key 'desktopEntries.enabled' has the wrong type") == true)
        #expect(try problem(#"{"desktopEntries": {"maximumRunning": 2.5}}"#) == "key 'desktopEntries.maximumRunning' is 2.5; give a whole number")
        #expect(try problem(#"{"desktopEntries": {"grace": 1}}"#)
                == "has unknown key 'desktopEntries.grace'; known: enabled, graceSeconds, maximumRunning, maximumScopeRequestsWaiting, reportMarginSeconds, scopeTimeoutSeconds, scopes, stderrSettleSeconds, stderrTailBytes, stderrTailLines, watch")
        #expect(try problem(#"{"desktopEntries": true}"#)?.hasPrefix("key 'desktopEntries' has the wrong type") == true)
    }

    @Test("a stderr tail fits a frame: with a small frame limit the default shrinks, and a larger one is refused")
    func tailFitsAFrame() throws {
        #expect(try load(#"{"maximumFrameLength": 8192}"#).desktopEntries.launch.stderrTailBytes == 4096)
        #expect(try load(#"{"maximumFrameLength": 8192, "desktopEntries": {"watch": true}}"#).desktopEntries.launch.stderrTailBytes == 4096)
        #expect(try problem(#"{"maximumFrameLength": 8192, "desktopEntries": {"stderrTailBytes": 4097}}"#) == "desktopEntries.stderrTailBytes is 4097; give 0 to 4096")
        #expect(try load(#"{"maximumFrameLength": 8192, "desktopEntries": {"stderrTailBytes": 4096}}"#).desktopEntries.launch.stderrTailBytes == 4096)
    }
}
