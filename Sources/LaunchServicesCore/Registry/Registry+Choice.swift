/// Choosing the app by hand (`lsopen --app`, like `open -b`): any registered app that
/// declares the scheme, whoever the scheme's handler is.
extension Registry {
    public enum Choice: Sendable, Equatable {
        case chosen(AppBundle)
        /// No app with that bundle id is registered.
        case notRegistered
        /// The app is registered but does not declare the scheme.
        case doesNotDeclare(AppBundle)
    }

    public func choose(_ id: String, for scheme: URLScheme) -> Choice {
        guard let app = apps[id] else { return .notRegistered }
        return app.schemes.contains(scheme) ? .chosen(app) : .doesNotDeclare(app)
    }
}
