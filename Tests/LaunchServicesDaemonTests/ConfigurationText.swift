import LaunchServicesDaemon
import LaunchServicesTesting

/// A configuration file written from `json` into a temporary folder and loaded as the daemon
/// loads it, for the suites that check what a file sets or refuses.
enum ConfigurationText {
    static func load(_ json: String) throws -> DaemonConfiguration {
        try TemporaryFolder.with { root in
            let path = root + "/launchservicesd.json"
            try writeFile(json, to: path)
            return try DaemonConfiguration.load(file: path)
        }
    }

    /// The refusal's problem, or nil when the file is accepted.
    static func problem(_ json: String) throws -> String? {
        do {
            _ = try load(json)
            return nil
        } catch let error as ConfigurationError {
            return error.problem
        }
    }
}
