import LaunchServicesCore
import LaunchServicesProtocol

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

/// One call of the exported object, as plain values: `org.freedesktop.Application`'s
/// methods, then the project's interface (`LaunchServicesBus.interface`).
package struct IncomingBusCall: Sendable, Equatable {
    package enum Method: Sendable, Equatable {
        case activate
        case open(uris: [String])
        case activateAction(name: String)
        /// `Open(s url, a{sv} options)`: the options as read, `total` how many there were.
        case openURL(String, options: [BusOption], total: Int)
        case canOpen(String)
        case explain(String)
        case report(AdminQuery)
        case quit(String)
    }

    /// The thread's key for the call; the reply names it.
    package var id: UInt64
    /// The caller's unique connection name (`:1.42`).
    package var sender: String
    package var method: Method
}

/// One entry of `Open`'s options.
package struct BusOption: Sendable, Equatable {
    package var key: String
    package var value: BusOptionValue
}

/// What a successful reply carries, written by the bus thread in the method's signature:
/// nothing, `b`, `a{sv}` (a dictionary value) or `aa{sv}` (an array of dictionaries). The
/// values inside the dictionaries follow `BusValueWriter`'s mapping.
package enum BusReplyValue: Sendable, Equatable {
    case none
    case boolean(Bool)
    case dictionary([(String, PropertyListValue)])
    case dictionaries([[(String, PropertyListValue)]])

    package static func == (a: BusReplyValue, b: BusReplyValue) -> Bool {
        switch (a, b) {
        case (.none, .none): return true
        case (.boolean(let x), .boolean(let y)): return x == y
        case (.dictionary(let x), .dictionary(let y)): return PropertyListValue.dictionary(x) == .dictionary(y)
        case (.dictionaries(let x), .dictionaries(let y)): return PropertyListValue.array(x.map { .dictionary($0) }) == .array(y.map { .dictionary($0) })
        default: return false
        }
    }
}

/// The loop's answer to an incoming call: a return (with its value), or an error.
package struct IncomingBusReply: Sendable, Equatable {
    package var id: UInt64
    /// `nil`: success. Else the error's name and message.
    package var error: (name: String, message: String)?
    package var value: BusReplyValue

    package init(id: UInt64, error: (name: String, message: String)? = nil, value: BusReplyValue = .none) {
        self.id = id
        self.error = error
        self.value = value
    }

    package static func == (a: IncomingBusReply, b: IncomingBusReply) -> Bool {
        a.id == b.id && a.error?.name == b.error?.name && a.error?.message == b.error?.message && a.value == b.value
    }
}

extension BusReplyValue {
    /// What a JSON answer of the daemon must be to become a D-Bus reply: an object (`a{sv}`)
    /// or an array of objects (`aa{sv}`).
    package enum Shape: Sendable, Equatable {
        case dictionary
        case dictionaries
    }

    /// The daemon's JSON answer (`lsopen --json`'s object, an `lsctl` report) as a D-Bus
    /// reply, through the one mapping `BusValueWriter` documents; `null`s are left out. A
    /// document of another shape, or that cannot be read, is a named `protocolError`: it is
    /// the daemon's own, so that would be a bug here, not the caller's.
    package init(json: String, shape: Shape, maximumBytes: Int) throws(OpenError) {
        let value: PropertyListValue
        do {
            value = try PropertyListJSON.parse(json, maximumBytes: maximumBytes, omittingNulls: true)
        } catch {
            throw OpenError(.protocolError, "launchservicesd's answer cannot be carried on D-Bus: \(error)")
        }
        switch (shape, value) {
        case (.dictionary, .dictionary(let entries)):
            self = .dictionary(entries)
        case (.dictionaries, .array(let items)):
            var list: [[(String, PropertyListValue)]] = []
            for item in items {
                guard case .dictionary(let entries) = item else {
                    throw OpenError(.protocolError, "launchservicesd's answer is a list holding something other than objects; it cannot be carried as aa{sv}")
                }
                list.append(entries)
            }
            self = .dictionaries(list)
        default:
            throw OpenError(.protocolError, "launchservicesd's answer is not \(shape == .dictionary ? "an object (a{sv})" : "a list of objects (aa{sv})")")
        }
    }
}
