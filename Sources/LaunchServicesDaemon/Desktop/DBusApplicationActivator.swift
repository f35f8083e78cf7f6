import LaunchServicesCore
import Logging
import NIOCore

/// What a D-Bus activation sends besides the URLs: `platform_data`.
///
/// The Desktop Entry specification defines two keys, both for the window system:
/// `desktop-startup-id` (X11 startup notification) and `activation-token` (Wayland's
/// xdg-activation), which let the app's window take focus. The daemon has no display and
/// makes no tokens, so by default the dictionary is empty: exactly what GLib sends when it
/// has no launch context (`gio open`). A caller that has a token of its own (a launcher
/// given one by the compositor: `XDG_ACTIVATION_TOKEN` or `DESKTOP_STARTUP_ID` in its
/// environment) can have it passed on; it goes in both keys, as GLib does since 2.76.
package struct DBusPlatformData: Sendable, Equatable {
    package var activationToken: String?

    package init(activationToken: String? = nil) {
        self.activationToken = activationToken
    }

    var argument: DBusArgument {
        guard let token = activationToken, !token.isEmpty else { return .variantDictionary([]) }
        return .variantDictionary([DBusDictionaryEntry("desktop-startup-id", .string(token)), DBusDictionaryEntry("activation-token", .string(token))])
    }
}

/// Launches `DBusActivatable` desktop apps: the daemon's `DBusApplicationActivator`; the
/// testing kit may supply its own.
package protocol DBusActivating: AnyObject {
    /// Hands `urls` to the app owning `busName` (`Activate` when there are none);
    /// `completion` runs once, on the loop: `delivered`, or `failedToStart` with the
    /// `.dbus` failure.
    func open(busName: String, urls: [String], platformData: DBusPlatformData, completion: @escaping (DesktopLaunchOutcome) -> Void)
}

/// Launches a `DBusActivatable=true` desktop entry as the Desktop Entry specification (and
/// GLib) does: `org.freedesktop.Application.Open(as uris, a{sv} platform_data)` to the
/// entry's bus name (`DBusActivation.busName(forEntryFile:)`), at the path derived from it,
/// on the session bus, which starts the app if it is not running. All the URLs go in one
/// call, as GLib sends them; with none, `Activate(platform_data)`.
///
/// The reply means the app has the URLs: `delivered`. Anything else is a named failure and
/// never "delivered": no session bus (which address was tried, from where), the bus's error
/// when it cannot start the app (`org.freedesktop.DBus.Error.ServiceUnknown`, `….Spawn.*`),
/// the app's own error reply (name and message), no reply by the deadline, the bus gone
/// meanwhile. No pid is known: the bus starts the app, and it may already have been running.
///
/// Confined to the loop; the calls run on the session bus thread (`SessionBusClient`).
package final class DBusApplicationActivator: DBusActivating {
    /// How long an app may take to be started by the bus and answer: D-Bus's own default
    /// reply timeout, which GLib's call uses too.
    package static let defaultDeadline: Duration = .seconds(25)

    private let loop: EventLoop
    private let bus: SessionBusClient
    private let deadline: Duration
    private let logger: Logger

    package init(loop: EventLoop, bus: SessionBusClient, deadline: Duration = DBusApplicationActivator.defaultDeadline, logger: Logger) {
        self.loop = loop
        self.bus = bus
        self.deadline = deadline
        self.logger = logger
    }

    package func open(busName: String, urls: [String], platformData: DBusPlatformData = DBusPlatformData(),
                      completion: @escaping (DesktopLaunchOutcome) -> Void) {
        loop.assertInEventLoop()
        if let problem = DBusName.problem(wellKnown: busName) {
            return finish(busName: busName, member: "Open",
                          .failed(.dbus(.invalidCall(reason: "\(TerminalText.quoted(busName)) is not a D-Bus bus name: \(problem)"))), completion)
        }
        let member = urls.isEmpty ? "Activate" : "Open"
        let arguments: [DBusArgument] = urls.isEmpty ? [platformData.argument] : [.stringArray(urls), platformData.argument]
        let call = DBusMethodCall(destination: busName, path: DBusName.objectPath(forWellKnown: busName),
                                  interface: DBusActivation.interface, member: member, arguments: arguments)
        bus.call(call, deadline: deadline, on: loop) { [self] result in
            switch result {
            case .success: finish(busName: busName, member: member, .delivered, completion)
            case .failure(let failure): finish(busName: busName, member: member, .failed(.dbus(failure)), completion)
            }
        }
    }

    private func finish(busName: String, member: String, _ outcome: DesktopLaunchOutcome, _ completion: (DesktopLaunchOutcome) -> Void) {
        let metadata: Logger.Metadata = ["bus_name": "\(busName)", "method": "\(member)", "outcome": "\(outcome.kind.rawValue)"]
        if outcome.kind.isSuccess {
            logger.info("desktop app \(outcome)", metadata: metadata)
        } else if case .dbus(.errorReply(let name, _))? = outcome.failure {
            // The app's message may quote the URL, which the log never holds; the caller gets it.
            logger.notice("desktop app not delivered: the reply was the error \(TerminalText.quoted(name)) (its message is not logged)", metadata: metadata)
        } else {
            logger.notice("desktop app \(outcome)", metadata: metadata)
        }
        completion(outcome)
    }
}
