import LaunchServicesClient

/// One pasteboard as an app uses it, after `UIPasteboard`: `application.pasteboard()` is the
/// general one, `pasteboard(named:)` a named one. Every call asks the daemon, so every app
/// and `lsctl pasteboard` see the same contents.
@MainActor
public struct AppPasteboard {
    let application: Application
    /// `nil` is the general pasteboard.
    public let name: String?

    /// Replaces the items; returns the new change count.
    @discardableResult
    public func copy(_ items: [PasteboardItem], expireSeconds: UInt64? = nil, persistent: Bool = false, password: String? = nil) throws(ClientError) -> UInt64 {
        try application.pasteboard(PasteboardRequest(.copy, name: name, items: items, password: password, expireSeconds: expireSeconds, persistent: persistent)).changeCount
    }

    /// Replaces the items with one text item.
    @discardableResult
    public func copy(text: String, expireSeconds: UInt64? = nil, persistent: Bool = false, password: String? = nil) throws(ClientError) -> UInt64 {
        try copy([PasteboardItem(text: text)], expireSeconds: expireSeconds, persistent: persistent, password: password)
    }

    /// The items (conforming to `type`, when given) and the change count.
    public func paste(type: String? = nil, password: String? = nil) throws(ClientError) -> PasteboardSnapshot {
        try application.pasteboard(PasteboardRequest(.paste, name: name, type: type, password: password))
    }

    /// The first text item, or `nil` when there is none.
    public func text(password: String? = nil) throws(ClientError) -> String? {
        try paste(password: password).items.first { PasteboardType.conforms($0.type, to: PasteboardType.text) }?.text
    }

    @discardableResult
    public func clear(password: String? = nil) throws(ClientError) -> UInt64 {
        try application.pasteboard(PasteboardRequest(.clear, name: name, password: password)).changeCount
    }
}

extension Application {
    public func pasteboard(named name: String? = nil) -> AppPasteboard {
        AppPasteboard(application: self, name: name)
    }
}
