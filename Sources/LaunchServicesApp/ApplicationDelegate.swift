// One import is all an app needs: the core types (ParsedURL, PropertyListValue, …) and the
// Foundation-free standard streams the demo apps print with, and the error the runtime throws.
@_exported import LaunchServicesCore
@_exported import enum LaunchServicesClient.StandardStreams
@_exported import enum LaunchServicesClient.ClientError

/// What an app implements, after iOS's `UIApplicationDelegate`. Every method is optional:
/// the defaults are iOS's (launch methods answer YES, notifications do nothing).
///
/// URL delivery follows iOS: `open(_:url:sourceApplication:annotation:)` when the app
/// implements it, otherwise the legacy `handleOpen(_:url:)`; an app implementing both gets
/// only the modern one. Which one ran is reported to the caller.
@MainActor
public protocol ApplicationDelegate: AnyObject {
    /// First launch method. Return NO to refuse the URL in `options` (it is then not delivered).
    func willFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool
    /// Second launch method; NO likewise refuses the URL.
    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool
    /// The modern URL entry point (iOS 4.2+). Return whether the URL was handled.
    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool
    /// The legacy entry point (iOS 4.1 and earlier), called only when `open` is not implemented.
    func handleOpen(_ application: Application, url: ParsedURL) -> Bool

    func didBecomeActive(_ application: Application)
    func willResignActive(_ application: Application)
    func didEnterBackground(_ application: Application)
    func willEnterForeground(_ application: Application)
    /// The daemon went away; the app is about to exit.
    func willTerminate(_ application: Application)
}

extension ApplicationDelegate {
    public func willFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool { true }
    public func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool { true }

    /// Not implemented by the app: fall back to the legacy method, as iOS does.
    public func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        application.deliveryTrace.modernIsDefault = true
        return handleOpen(application, url: url)
    }

    /// Not implemented either: nothing handles the URL.
    public func handleOpen(_ application: Application, url: ParsedURL) -> Bool {
        application.deliveryTrace.legacyIsDefault = true
        return false
    }

    public func didBecomeActive(_ application: Application) {}
    public func willResignActive(_ application: Application) {}
    public func didEnterBackground(_ application: Application) {}
    public func willEnterForeground(_ application: Application) {}
    public func willTerminate(_ application: Application) {}
}

/// iOS's launch-options keys: the URL that launched the app, who asked, and the annotation.
public struct LaunchOptions: Sendable, Equatable {
    /// `UIApplicationLaunchOptionsURLKey`; `nil` when the URL does not parse.
    public var url: ParsedURL?
    /// The URL exactly as the caller sent it.
    public var urlString: String
    /// `UIApplicationLaunchOptionsSourceApplicationKey`: verified by the daemon.
    public var sourceApplication: String
    /// `UIApplicationLaunchOptionsAnnotationKey`.
    public var annotation: PropertyListValue?
    /// Launched for a background open: the app will not become active for this URL.
    public var inBackground = false

    public init(urlString: String, sourceApplication: String, annotation: PropertyListValue?) {
        self.urlString = urlString
        self.url = try? ParsedURL(urlString)
        self.sourceApplication = sourceApplication
        self.annotation = annotation
    }
}
