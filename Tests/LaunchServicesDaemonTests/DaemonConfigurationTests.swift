import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `DaemonConfiguration.load(file:)`: a JSON file over the defaults; every refusal names the
/// file and the key.
@Suite("DaemonConfiguration files")
struct DaemonConfigurationFileTests {
    /// Writes `json` to a file in a temporary folder and loads it; returns the file's path too.
    func load(_ json: String) throws -> (config: DaemonConfiguration, path: String) {
        try TemporaryFolder.with { root in
            let path = root + "/launchservicesd.json"
            try writeFile(json, to: path)
            return (try DaemonConfiguration.load(file: path), path)
        }
    }

    /// Writes `json`, loads it, and returns the refusal with the file's path (nil when accepted).
    func refusal(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> (error: ConfigurationError, path: String)? {
        try TemporaryFolder.with { root in
            let path = root + "/launchservicesd.json"
            try writeFile(json, to: path)
            do {
                _ = try DaemonConfiguration.load(file: path)
                return nil
            } catch let error as ConfigurationError {
                #expect(error.path == path, "the error names the file", sourceLocation: sourceLocation)
                #expect(error.description.hasPrefix("configuration \(path) "), sourceLocation: sourceLocation)
                return (error, path)
            }
        }
    }

    @Test("a file overrides only the keys it names; the rest keep their defaults")
    func overridesSome() throws {
        let (config, _) = try load("""
            {
              "$comment": "comments are allowed",
              "appsFolders": ["/opt/apps", "/srv/apps"],
              "deadlines": {"launch": 2.5, "openURL": 0.25},
              "maximumPendingOpensPerApp": 3
            }
            """)
        let defaults = DaemonConfiguration()
        #expect(config.appsFolders == ["/opt/apps", "/srv/apps"])
        #expect(config.deadlines.launch == .milliseconds(2500))
        #expect(config.deadlines.openURL == .milliseconds(250))
        #expect(config.deadlines.willFinishLaunching == defaults.deadlines.willFinishLaunching)
        #expect(config.deadlines.didFinishLaunching == defaults.deadlines.didFinishLaunching)
        #expect(config.connectionLimits.maximumPendingRequests == 3)
        #expect(config.maximumFrameLength == defaults.maximumFrameLength)
        #expect(config.shutdownGrace == defaults.shutdownGrace)
    }

    @Test("every key at once")
    func everyKey() throws {
        let (config, _) = try load("""
            {"appsFolders": [], "deadlines": {"launch": 1, "willFinishLaunching": 2, "didFinishLaunching": 3, "openURL": 4},
             "maximumFrameLength": 8192, "maximumPendingOpensPerApp": 10000, "shutdownGraceSeconds": 0.5}
            """)
        #expect(config.appsFolders.isEmpty)
        #expect(config.deadlines == PhaseDeadlines(launch: .seconds(1), willFinishLaunching: .seconds(2), didFinishLaunching: .seconds(3), openURL: .seconds(4)))
        #expect(config.maximumFrameLength == 8192)
        #expect(config.connectionLimits.maximumPendingRequests == 10000)
        #expect(config.shutdownGrace == .milliseconds(500))
    }

    @Test("an empty object is the built-in defaults")
    func emptyObject() throws {
        let (config, _) = try load("{}")
        #expect(config == DaemonConfiguration())
        #expect(config.deadlines == PhaseDeadlines())
        #expect(config.maximumFrameLength == 1 << 20)
        #expect(config.connectionLimits == ConnectionLimits())
        #expect(config.shutdownGrace == .seconds(2))
    }

    @Test("range boundaries are accepted")
    func boundaries() throws {
        let (config, _) = try load(#"{"deadlines": {"launch": 3600, "openURL": 0.001}, "maximumFrameLength": 4096, "maximumPendingOpensPerApp": 1}"#)
        #expect(config.deadlines.launch == .seconds(3600))
        #expect(config.deadlines.openURL == .milliseconds(1))
        #expect(config.maximumFrameLength == 4096)
        #expect(config.connectionLimits.maximumPendingRequests == 1)
        #expect(try load(#"{"maximumFrameLength": 67108864}"#).config.maximumFrameLength == 64 << 20)
    }

    @Test("an unknown top-level key is refused, naming it and listing the known keys")
    func unknownKey() throws {
        let (error, _) = try #require(try refusal(#"{"deadline": {"launch": 1}}"#))
        #expect(error.problem.hasPrefix("has unknown key 'deadline'; known keys: "), "\(error)")
        #expect(error.problem.contains("appsFolders, backgroundGraceSeconds, callbackPolicy, connections, deadlines, desktopEntries, maximumFrameLength, maximumLiveApps, maximumOpensInFlightPerApp, maximumPendingOpensPerApp, pasteboard, prewriteLaunchMethods, shutdownGraceSeconds, watchAppsFolders"))
    }

    @Test("an unknown deadline is refused, naming deadlines.KEY and the phases")
    func unknownDeadlineKey() throws {
        let (error, _) = try #require(try refusal(#"{"deadlines": {"openUrl": 1}}"#))
        #expect(error.problem == "has unknown key 'deadlines.openUrl'; phases: didFinishLaunching, launch, openURL, willFinishLaunching")
    }

    @Test("bad JSON is refused as not valid JSON, naming the file", arguments: [#"{"#, #"{"deadlines": }"#, "", "not json", #"{"a" 1}"#])
    func badJSON(json: String) throws {
        let (error, _) = try #require(try refusal(json))
        #expect(error.problem.hasPrefix("is not valid JSON"), "\(error)")
    }

    @Test("a top-level array is refused as not an object")
    func arrayAtTopLevel() throws {
        let (error, _) = try #require(try refusal("[1, 2]"))
        #expect(error.problem == "must hold a JSON object at the top level", "\(error)")
    }

    @Test(
        "a top-level scalar is refused as not an object, not under an empty key",
        arguments: [#""text""#, "42", "null", "true"]
    )
    func scalarAtTopLevel(json: String) throws {
        let (error, _) = try #require(try refusal(json))
        #expect(error.problem == "must hold a JSON object at the top level", "\(error)")
    }

    @Test("out-of-range deadlines are refused, naming deadlines.KEY and the value", arguments: [
        ("launch", "0", "0.0"), ("willFinishLaunching", "-1", "-1.0"), ("didFinishLaunching", "3600.5", "3600.5"), ("openURL", "100000", "100000.0"),
    ])
    func deadlineOutOfRange(key: String, value: String, shown: String) throws {
        let (error, _) = try #require(try refusal(#"{"deadlines": {"\#(key)": \#(value)}}"#))
        #expect(error.problem == "deadlines.\(key) is \(shown); give seconds between 0 and 3600", "\(error)")
    }

    @Test("out-of-range limits are refused, naming the key", arguments: [
        (#"{"maximumFrameLength": 4095}"#, "maximumFrameLength is 4095; give bytes between 4096 and 67108864"),
        (#"{"maximumFrameLength": 67108865}"#, "maximumFrameLength is 67108865; give bytes between 4096 and 67108864"),
        (#"{"maximumPendingOpensPerApp": 0}"#, "maximumPendingOpensPerApp is 0; give 1 to 10000"),
        (#"{"maximumPendingOpensPerApp": 10001}"#, "maximumPendingOpensPerApp is 10001; give 1 to 10000"),
    ])
    func limitOutOfRange(json: String, problem: String) throws {
        let (error, _) = try #require(try refusal(json))
        #expect(error.problem == problem)
    }

    @Test("an out-of-range shutdownGraceSeconds is refused", arguments: ["0", "-2", "3601"])
    func shutdownGraceOutOfRange(value: String) throws {
        let (error, _) = try #require(try refusal(#"{"shutdownGraceSeconds": \#(value)}"#))
        #expect(error.problem.contains("shutdownGraceSeconds"))
    }

    @Test("an out-of-range shutdownGraceSeconds is reported under its own key")
    func shutdownGraceKeyName() throws {
        let (error, _) = try #require(try refusal(#"{"shutdownGraceSeconds": 0}"#))
        #expect(!error.problem.contains("deadlines."), "\(error)")
        #expect(error.problem.hasPrefix("shutdownGraceSeconds is 0.0"), "\(error)")
    }

    @Test("a value of the wrong type is refused, naming its key path", arguments: [
        (#"{"maximumFrameLength": "big"}"#, "maximumFrameLength"),
        (#"{"appsFolders": "/one/folder"}"#, "appsFolders"),
        (#"{"deadlines": {"launch": "fast"}}"#, "deadlines.launch"),
        (#"{"deadlines": 5}"#, "deadlines"),
        (#"{"shutdownGraceSeconds": true}"#, "shutdownGraceSeconds"),
    ])
    func wrongType(json: String, key: String) throws {
        let (error, _) = try #require(try refusal(json))
        #expect(error.problem.hasPrefix("key '\(key)' has the wrong type"), "\(error)")
    }

    @Test("a fractional number where an integer is expected is refused")
    func fractionalIntegerRefused() throws {
        #expect(try refusal(#"{"maximumFrameLength": 4096.5}"#) != nil)
        #expect(try refusal(#"{"maximumPendingOpensPerApp": 2.5}"#) != nil)
    }

    @Test("a fractional number where an integer is expected is reported under its key, not as invalid JSON")
    func fractionalIntegerKeyName() throws {
        let (error, _) = try #require(try refusal(#"{"maximumFrameLength": 4096.5}"#))
        #expect(error.problem.contains("maximumFrameLength"), "\(error)")
        #expect(!error.problem.contains("not valid JSON"), "\(error)")
    }

    @Test("callbackPolicy and pasteboard limits: read, and refused with their key when wrong")
    func callbackPolicyAndPasteboard() throws {
        let config = try load(#"{"callbackPolicy": "flag", "pasteboard": {"maximumBytes": 5000, "maximumItems": 3, "maximumExpirySeconds": 60}}"#).config
        #expect(config.callbackPolicy == .flag)
        #expect(config.pasteboardLimits.maximumBytes == 5000)
        #expect(config.pasteboardLimits.maximumItems == 3)
        #expect(config.pasteboardLimits.maximumExpirySeconds == 60)
        #expect(try load("{}").config.callbackPolicy == .refuse, "refuse is the default")
        let queues = try load(#"{"pasteboard": {"maximumOperationsPerConnection": 2, "maximumPasswordChecksWaiting": 5}}"#).config.pasteboardLimits
        #expect(queues.maximumOperationsPerConnection == 2)
        #expect(queues.maximumPasswordChecksWaiting == 5)
        #expect(try load("{}").config.pasteboardLimits.maximumOperationsPerConnection == 16)
        for (json, words) in [
            (#"{"callbackPolicy": "allow"}"#, "callbackPolicy is 'allow'; give 'refuse' or 'flag'"),
            (#"{"pasteboard": {"maxBytes": 1}}"#, "unknown key 'pasteboard.maxBytes'"),
            (#"{"pasteboard": {"maximumOperationsPerConnection": 0}}"#, "pasteboard.maximumOperationsPerConnection is 0; give 1 to 1024"),
            (#"{"pasteboard": {"maximumItems": 2.5}}"#, "key 'pasteboard.maximumItems' is 2.5; give a whole number"),
            (#"{"pasteboard": {"maximumBytes": 2000000}}"#, "pasteboard.maximumBytes is 2000000; give 1 to 1044480"),
        ] {
            let (error, _) = try #require(try refusal(json))
            #expect(error.problem.contains(words), "\(error)")
        }
    }

    @Test("backgroundGraceSeconds and maximumLiveApps: read, 0 turns suspension off, bad values named")
    func backgroundPolicy() throws {
        let config = try load(#"{"backgroundGraceSeconds": 1.5, "maximumLiveApps": 3}"#).config
        #expect(config.background == BackgroundPolicy(suspendAfter: .milliseconds(1500), maximumLiveApps: 3))
        #expect(try load(#"{"backgroundGraceSeconds": 0}"#).config.background.suspendAfter == nil)
        #expect(try load("{}").config.background == BackgroundPolicy(suspendAfter: .seconds(30), maximumLiveApps: 16))
        for (json, words) in [
            (#"{"backgroundGraceSeconds": -1}"#, "backgroundGraceSeconds is -1.0; give seconds between 0 and 3600"),
            (#"{"maximumLiveApps": 0}"#, "maximumLiveApps is 0; give 1 to 10000"),
            (#"{"maximumLiveApps": 2.5}"#, "key 'maximumLiveApps' is 2.5; give a whole number"),
        ] {
            let (error, _) = try #require(try refusal(json))
            #expect(error.problem.contains(words), "\(error)")
        }
    }

    @Test("prewriteLaunchMethods: read (default true), a non-boolean named")
    func prewriteLaunchMethods() throws {
        #expect(try load("{}").config.prewriteLaunchMethods == true)
        #expect(try load(#"{"prewriteLaunchMethods": false}"#).config.prewriteLaunchMethods == false)
        #expect(try load(#"{"prewriteLaunchMethods": true}"#).config.prewriteLaunchMethods == true)
        let (error, _) = try #require(try refusal(#"{"prewriteLaunchMethods": 1}"#))
        #expect(error.problem.contains("prewriteLaunchMethods"), "\(error.problem)")
    }

    @Test("maximumOpensInFlightPerApp: read (default 16), bad values named")
    func opensInFlight() throws {
        #expect(try load("{}").config.maximumOpensInFlightPerApp == 16)
        #expect(try load(#"{"maximumOpensInFlightPerApp": 1}"#).config.maximumOpensInFlightPerApp == 1)
        #expect(try load(#"{"maximumOpensInFlightPerApp": 256}"#).config.maximumOpensInFlightPerApp == 256)
        for (json, words) in [
            (#"{"maximumOpensInFlightPerApp": 0}"#, "maximumOpensInFlightPerApp is 0; give 1 to 256"),
            (#"{"maximumOpensInFlightPerApp": 257}"#, "maximumOpensInFlightPerApp is 257; give 1 to 256"),
            (#"{"maximumOpensInFlightPerApp": 2.5}"#, "key 'maximumOpensInFlightPerApp' is 2.5; give a whole number"),
        ] {
            let (error, _) = try #require(try refusal(json))
            #expect(error.problem.contains(words), "\(error)")
        }
    }

    @Test("a file that does not exist is refused, naming it")
    func missingFile() throws {
        try TemporaryFolder.with { root in
            let path = root + "/absent.json"
            do {
                _ = try DaemonConfiguration.load(file: path)
                Issue.record("a missing file was accepted")
            } catch let error as ConfigurationError {
                #expect(error.path == path)
                #expect(error.description == "configuration \(path) cannot be read (missing or not readable)")
            }
        }
    }

    @Test("default locations follow the XDG variables, else HOME")
    func defaultLocations() {
        let xdg = ["XDG_DATA_HOME": "/d", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c", "HOME": "/h"]
        #expect(DaemonConfiguration.defaultAppsFolder(environment: xdg) == "/d/launchservices/apps")
        #expect(DaemonConfiguration.defaultStateFolder(environment: xdg) == "/s/launchservices")
        #expect(DaemonConfiguration.defaultConfigFile(environment: xdg) == "/c/launchservices/launchservicesd.json")
        let home = ["HOME": "/h", "XDG_DATA_HOME": "", "XDG_STATE_HOME": ""]
        #expect(DaemonConfiguration.defaultAppsFolder(environment: home) == "/h/.local/share/launchservices/apps")
        #expect(DaemonConfiguration.defaultStateFolder(environment: home) == "/h/.local/state/launchservices")
        #expect(DaemonConfiguration.defaultConfigFile(environment: home) == "/h/.config/launchservices/launchservicesd.json")
    }
}
