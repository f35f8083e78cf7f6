/// How desktop apps are started and watched (`DesktopLauncher`). Durations, not wall-clock
/// instants: every wait is bounded by one of these.
public struct DesktopLaunchSettings: Sendable, Equatable {
    /// How long a new process is watched before the caller hears `running`; an exit within
    /// it is `forwarded` (status 0) or `exited`. A handler that passes the URL to a running
    /// instance typically exits within tens of milliseconds.
    public var grace: Duration = .milliseconds(500)
    /// After an exit within the grace, how long to wait for the last of its stderr (the
    /// forwarder ends once every writer of the pipe is gone; a child the app left holding
    /// stderr would otherwise hold the answer).
    public var stderrSettle: Duration = .seconds(2)
    /// How much of stderr an outcome shows.
    public var stderrTailLines = 10
    public var stderrTailBytes = 8192
    /// Beyond the grace and the settle, how long the waiter process may take to report
    /// before the launch is answered from what the daemon sees itself.
    public var reportMargin: Duration = .seconds(5)
    /// Put each app in a transient scope of the user manager when one runs (`false`: never).
    public var scopes = true
    /// How long one `StartTransientUnit` may take.
    public var scopeTimeout: Duration = .seconds(2)
    /// Scope requests waiting for the scope thread, at most; beyond it an app gets no scope
    /// (logged) rather than a growing queue.
    public var maximumScopeRequestsWaiting = 64
    /// Desktop app processes the daemon watches at once (for `running`), at most; a launch
    /// beyond it is refused (`tooManyRunning`).
    public var maximumRunning = 512
    /// The `<launcher>` part of the scope names (`app-launchservices-ID-RANDOM.scope`).
    public var scopeLauncher = "launchservices"
    /// The slice scopes go in (systemd's "Desktop Environments" note: normal apps in `app.slice`).
    public var scopeSlice: String? = "app.slice"

    public init() {}

    var graceMilliseconds: Int32 {
        let (seconds, attoseconds) = grace.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
