/// What happens to apps in the background: after `suspendAfter` a background app
/// is suspended (stopped, as iOS freezes it), and when more than `maximumLiveApps` are
/// alive, the least recently used suspended app is terminated (iOS's memory-pressure kill).
public struct BackgroundPolicy: Sendable, Equatable {
    /// The grace a background app gets before it is suspended; `nil` never suspends.
    public var suspendAfter: Duration?
    /// Apps alive at once (launching, active, background or suspended) before the least
    /// recently used suspended one is terminated. Only suspended apps are ever evicted, so
    /// this is a soft limit while every app is busy.
    public var maximumLiveApps: Int

    public init(suspendAfter: Duration? = .seconds(30), maximumLiveApps: Int = 16) {
        self.suspendAfter = suspendAfter
        self.maximumLiveApps = maximumLiveApps
    }
}
