/// Whether the daemon reads the user's desktop entries, whether it watches them, and how it
/// launches them: the configuration's `desktopEntries` section.
public struct DesktopEntrySettings: Sendable, Equatable {
    /// Off: no desktop entry is read or watched, and none is ever a handler (native apps only,
    /// as before desktop entries were read).
    public var enabled = true
    /// Whether the folders are watched (inotify) and read again on change; without it they
    /// are read at start only.
    public var watch = true
    public var launch = DesktopLaunchSettings()

    public init() {}

    /// Reads the section over `defaults`. Seconds are refused outside (0, 60] and counts
    /// outside their range, each naming `desktopEntries.KEY`; a stderr tail must fit a frame
    /// with room to spare (`maximumFrameLength`).
    static func load(_ file: DaemonConfiguration.File.DesktopEntries, over defaults: DesktopEntrySettings, maximumFrameLength: Int,
                     path: String) throws -> DesktopEntrySettings {
        func count(_ value: Int?, _ key: String, _ range: ClosedRange<Int>, _ fallback: Int) throws -> Int {
            guard let value else { return fallback }
            guard range.contains(value) else {
                throw ConfigurationError(path: path, problem: "desktopEntries.\(key) is \(value); give \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
        func seconds(_ value: Double?, _ key: String, _ fallback: Duration) throws -> Duration {
            guard let value else { return fallback }
            return try DaemonConfiguration.File.seconds(value, key: "desktopEntries.\(key)", upTo: 60, path: path)
        }
        var settings = defaults
        if let enabled = file.enabled { settings.enabled = enabled }
        if let watch = file.watch { settings.watch = watch }
        var launch = settings.launch
        launch.grace = try seconds(file.graceSeconds, "graceSeconds", launch.grace)
        launch.stderrSettle = try seconds(file.stderrSettleSeconds, "stderrSettleSeconds", launch.stderrSettle)
        launch.reportMargin = try seconds(file.reportMarginSeconds, "reportMarginSeconds", launch.reportMargin)
        launch.stderrTailLines = try count(file.stderrTailLines, "stderrTailLines", 0...1000, launch.stderrTailLines)
        launch.stderrTailBytes = try count(file.stderrTailBytes, "stderrTailBytes", 0...min(65536, maximumFrameLength / 2),
                                           min(launch.stderrTailBytes, maximumFrameLength / 2))
        if let scopes = file.scopes { launch.scopes = scopes }
        launch.scopeTimeout = try seconds(file.scopeTimeoutSeconds, "scopeTimeoutSeconds", launch.scopeTimeout)
        launch.maximumScopeRequestsWaiting = try count(file.maximumScopeRequestsWaiting, "maximumScopeRequestsWaiting", 1...1024,
                                                       launch.maximumScopeRequestsWaiting)
        launch.maximumRunning = try count(file.maximumRunning, "maximumRunning", 1...10_000, launch.maximumRunning)
        settings.launch = launch
        return settings
    }
}
