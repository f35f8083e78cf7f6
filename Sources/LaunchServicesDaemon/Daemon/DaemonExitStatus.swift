/// Every status `launchservicesd` exits with, as its `--help` and the README list them (a
/// test holds the README's table to this one).
public enum DaemonExitStatus {
    public static let all: [(status: Int32, meaning: String)] = [
        (0, "stopped by SIGTERM or SIGINT"),
        (1, "could not start (the socket is served by another daemon, the state folder or the socket cannot be used); the reason is logged"),
        (64, "usage error, or a configuration file that cannot be read"),
    ]
}
