/// An x-callback-url request as an app receives it: the request, and who really sent it.
public struct CallbackRequest: Sendable, Equatable {
    public var request: XCallbackRequest
    /// The verified sender; replies go back only to it.
    public var sourceApplication: String
    /// Set when the daemon flagged the request's callbacks (callback policy `flag`).
    public var warning: String?

    public var action: String { request.action }
    public func parameter(_ name: String) -> String? { request.parameter(name) }
}

/// How an x-callback-url action ended.
public enum CallbackResult: Sendable, Equatable {
    /// `x-success`, with the results appended.
    case success([QueryItem])
    /// `x-error`, with `errorCode` and `errorMessage`.
    case error(code: String, message: String)
    /// `x-cancel`.
    case cancel
}

extension Application {
    /// The x-callback-url request in `url`, or `nil` when `url` is not one
    /// (`SCHEME://x-callback-url/ACTION?…`).
    public func callbackRequest(_ url: ParsedURL, sourceApplication: String?) -> CallbackRequest? {
        guard let request = try? XCallbackRequest(url) else { return nil }
        return CallbackRequest(request: request, sourceApplication: sourceApplication ?? "", warning: currentDeliveryWarning)
    }

    /// Replies to a request: opens its x-success, x-error or x-cancel URL as a returning open,
    /// (a request answered this way, even with x-error, counts as handled: return YES from
    /// `open`, so the caller hears about the failure once, from the callback)
    /// so the daemon delivers it only to the app that sent the request. Returns false when
    /// the caller gave no URL for this result (nothing is opened).
    @discardableResult
    public func reply(_ request: CallbackRequest, _ result: CallbackResult, completion: ((OpenOutcome) -> Void)? = nil) -> Bool {
        let url: String?
        switch result {
        case .success(let items): url = request.request.successReply(items)
        case .error(let code, let message): url = request.request.errorReply(code: code, message: message)
        case .cancel: url = request.request.cancelReply
        }
        guard let url else { return false }
        open(url, returningTo: request.sourceApplication, completion: completion)
        return true
    }
}
