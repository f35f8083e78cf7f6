import LaunchServicesCore

/// What the daemon serves on the session bus: a name owned and `org.freedesktop.Application`
/// exported at `path`, carried out by the session bus thread (`SessionBusWorker`) on its one
/// connection. The thread reports through `report`, on its own thread: the receiver hands
/// each event to the loop.
package struct SessionBusServer: Sendable {
    package var name: String
    package var path: String
    /// Incoming calls the thread holds unanswered, at most; one past it is answered at once
    /// with `errorName`'s `unavailable` error rather than queued.
    package var maximumIncomingCalls: Int
    /// First wait before connecting again after the bus could not be reached or went away;
    /// doubled after each failure up to `maximumRetryDelay`.
    package var firstRetryDelay: Duration = .seconds(1)
    package var maximumRetryDelay: Duration = .seconds(30)
    package var report: @Sendable (SessionBusEvent) -> Void

    package init(name: String, path: String, maximumIncomingCalls: Int = 1024, report: @escaping @Sendable (SessionBusEvent) -> Void) {
        self.name = name
        self.path = path
        self.maximumIncomingCalls = maximumIncomingCalls
        self.report = report
    }
}

/// What the bus thread tells the loop about the server side.
package enum SessionBusEvent: Sendable {
    /// Connected (authenticated, `Hello` said) and the name is ours.
    case nameOwned(address: String)
    /// Connected, but another connection owns the name (or the bus refused it).
    case nameRefused(address: String, reason: String)
    /// No bus could be reached; tried again after `retry`.
    case unreachable(DBusCallFailure, retry: Duration)
    /// The connection ended; tried again after `retry`. Calls it held are gone with it.
    case lost(DBusCallFailure, retry: Duration)
    /// A call of the exported object, to be answered exactly once (`SessionBusClient.reply`).
    case call(IncomingBusCall)
    /// A connection left the bus (`NameOwnerChanged` of a unique name): its calls cannot be
    /// answered any more.
    case senderLeft(String)
}

/// One call of `org.freedesktop.Application`, as plain values.
package struct IncomingBusCall: Sendable, Equatable {
    package enum Method: Sendable, Equatable {
        case activate
        case open(uris: [String])
        case activateAction(name: String)
    }

    /// The thread's key for the call; the reply names it.
    package var id: UInt64
    /// The caller's unique connection name (`:1.42`).
    package var sender: String
    package var method: Method
}

/// The loop's answer to an incoming call: an empty return, or an error.
package struct IncomingBusReply: Sendable, Equatable {
    package var id: UInt64
    /// `nil`: success. Else the error's name and message.
    package var error: (name: String, message: String)?

    package init(id: UInt64, error: (name: String, message: String)? = nil) {
        self.id = id
        self.error = error
    }

    package static func == (a: IncomingBusReply, b: IncomingBusReply) -> Bool {
        a.id == b.id && a.error?.name == b.error?.name && a.error?.message == b.error?.message
    }
}
