/// The two kinds of app that open URLs: a native app (an Info.plist bundle on this package's
/// runtime, with the full launch lifecycle) or a desktop app (a freedesktop desktop entry,
/// launched by its Exec line or over D-Bus). Raw values are the wire's and `--json`'s.
public enum HandlerKind: String, Sendable, Equatable, CaseIterable, Codable {
    case native
    case desktop
}
