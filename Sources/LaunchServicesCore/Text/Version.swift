/// The release of swift-launch-services: what `launchservicesd`, `lsopen` and `lsctl` print
/// for `--version` and what the daemon reports in `lsctl status`. Kept here, in the module all
/// three link, so there is one place to bump it.
public enum LaunchServicesVersion {
    public static let current = "0.4.0"
}
