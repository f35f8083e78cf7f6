/// An open the daemon has accepted for an app: what the app is told (iOS's launch options
/// carry the same three values) and the token under which the caller awaits the outcome.
public struct OpenRequest: Sendable, Equatable {
    /// Daemon-assigned; the outcome is replied under it.
    public var token: LaunchToken
    public var url: String
    /// The verified identity of the caller, never its own claim.
    public var sourceApplication: String
    public var annotation: PropertyListValue?
    /// Why the daemon would have refused the URL's callbacks, when its policy only flags them.
    public var warning: String?
    /// Which connection asked (a number the daemon gives each): opens queued for one app
    /// are served in turns by caller (`FairOpenQueue`).
    public var caller: UInt64
    /// Deliver without bringing the app to the front (`lsopen --background`).
    public var background: Bool

    public init(token: LaunchToken, url: String, sourceApplication: String, annotation: PropertyListValue? = nil, warning: String? = nil, caller: UInt64 = 0, background: Bool = false) {
        self.token = token
        self.background = background
        self.caller = caller
        self.url = url
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.warning = warning
    }
}
