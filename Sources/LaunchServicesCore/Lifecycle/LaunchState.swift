/// Where an open found its app, as `am start -W` reports it: what the open had to do before
/// the URL could be delivered.
public enum LaunchState: String, Sendable, Codable, CaseIterable {
    /// Not running: launched for this open.
    case cold
    /// Running in the background: brought back (or, for a background open, left there).
    case warm
    /// Suspended: resumed for this open.
    case resumed
    /// Already the frontmost app.
    case hot
}

/// How a caller wants a URL opened, beyond the URL itself.
public struct OpenOptions: Sendable, Equatable {
    /// Open in this app (it must declare the scheme) instead of the scheme's handler.
    public var app: String?
    /// Deliver the URL without bringing the app to the front; the frontmost app stays.
    public var background: Bool

    public init(app: String? = nil, background: Bool = false) {
        self.app = app
        self.background = background
    }
}
