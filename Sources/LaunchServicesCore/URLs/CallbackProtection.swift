/// Keeps a caller from sending control to a third app (the iOS URL-scheme write-ups warn: "should the
/// calling client lie … control may be transferred to a third application").
///
/// Two moments are checked, with the same rule — a callback may only go to the app that
/// asked for it, as the daemon resolves that app, never as the URL claims:
/// - **the request**: every `x-success`, `x-error` and `x-cancel` URL must open in the
///   verified source application itself (or, for a tool, in a callback address it reserved);
/// - **the reply**: an app returning control (`Application.reply`, `open(_:returningTo:)`)
///   names whom it returns to, and the URL must open in exactly that app.
public enum CallbackPolicy: String, Sendable, Codable, CaseIterable {
    /// A violation refuses the open (`notPermitted`); the target app is never launched.
    case refuse
    /// A violation is delivered anyway, with a warning the receiving app can see.
    case flag
}

/// The scheme `launchservicesd` keeps for callers that own no scheme (`lsopen --wait`):
/// `x-lsopen-callback://TOKEN/success` reaches the connection that reserved TOKEN. No app may
/// declare it.
public enum CallbackAddress {
    public static let scheme = try! URLScheme(validating: "x-lsopen-callback")

    /// The reservation token of a reserved-scheme URL (its host), or `nil` for any other URL.
    public static func token(of url: ParsedURL) -> String? {
        guard url.scheme == scheme, let host = url.host, !host.isEmpty else { return nil }
        return host
    }

    /// The base URL for a token; callers append `/success`, `/error` or `/cancel`.
    public static func base(token: String) -> String { "\(scheme)://\(token)" }
}

/// One callback that would not return to its caller.
public struct CallbackViolation: Sendable, Equatable, CustomStringConvertible {
    /// `x-success`, `x-error`, `x-cancel`, or `reply` for a returning open.
    public var parameter: String
    public var url: String
    public var message: String

    public var description: String { message }
}

/// The pure check; the daemon supplies how schemes resolve and who owns each reservation.
public struct CallbackCheck {
    /// The bundle id that would open `scheme` now, or `nil`.
    public var handler: (URLScheme) -> String?
    /// The identity that reserved the callback token, or `nil` when no one did.
    public var reservationOwner: (String) -> String?

    public init(handler: @escaping (URLScheme) -> String?, reservationOwner: @escaping (String) -> String?) {
        self.handler = handler
        self.reservationOwner = reservationOwner
    }

    /// The parameters that name callbacks (x-callback-url 1.0).
    public static let callbackParameters = ["x-success", "x-error", "x-cancel"]

    /// The canonical name (`x-success`, …) when `name` names a callback in any spelling
    /// (`X-Success`, `X-ERROR`), else `nil`: callees disagree on case, so a check that saw
    /// only the lower-case names would pass a callback some callee still honours.
    public static func callbackParameter(_ name: String) -> String? {
        XCallbackRequest.reservedName(name).flatMap { callbackParameters.contains($0) ? $0 : nil }
    }

    /// Whether `checkRequest` has anything to read in `url`: the callbacks a request
    /// carries are query items, so a URL without a query carries none. Lets a caller skip
    /// making a check (and its two closures) for such a URL.
    public static func mayCarryCallbacks(_ url: ParsedURL) -> Bool {
        url.rawQuery?.isEmpty == false
    }

    /// Checks the callbacks a request carries against its verified source. Any URL with
    /// these parameters is checked, whatever its host and however they are spelled: the
    /// names are reserved. Every occurrence is checked, since callees differ in which of
    /// several they take.
    public func checkRequest(_ url: ParsedURL, source: String) -> CallbackViolation? {
        for item in url.queryItems() where Self.callbackParameter(item.name) != nil {
            guard let value = item.value, !value.isEmpty else { continue }
            if let violation = check(value, returningTo: source, parameter: item.name) { return violation }
        }
        return nil
    }

    /// Checks that `callback` opens in `returnTo` and nowhere else.
    public func check(_ callback: String, returningTo returnTo: String, parameter: String) -> CallbackViolation? {
        let target: ParsedURL
        do {
            target = try ParsedURL(callback)
        } catch {
            return CallbackViolation(parameter: parameter, url: callback, message: "the \(parameter) callback \(TerminalText.quoted(callback)) is not a valid URL: \(error)")
        }
        if let token = CallbackAddress.token(of: target) {
            guard let owner = reservationOwner(token) else {
                return CallbackViolation(parameter: parameter, url: callback, message: "the \(parameter) callback \(TerminalText.quoted(callback)) names a callback address nobody is waiting on")
            }
            guard owner == returnTo else {
                return CallbackViolation(parameter: parameter, url: callback, message: "the \(parameter) callback \(TerminalText.quoted(callback)) was reserved by \(owner), not by \(returnTo)")
            }
            return nil
        }
        if target.scheme == CallbackAddress.scheme {
            return CallbackViolation(parameter: parameter, url: callback, message: "the \(parameter) callback \(TerminalText.quoted(callback)) uses the reserved scheme '\(CallbackAddress.scheme)' without a token")
        }
        let opener = handler(target.scheme)
        guard opener == returnTo else {
            let where_ = opener.map { "opens in \($0)" } ?? "opens in no app"
            return CallbackViolation(parameter: parameter, url: callback, message:
                "the \(parameter) callback \(TerminalText.quoted(callback)) \(where_), not in \(returnTo): a callback may only return to the app that asked for it")
        }
        return nil
    }
}
