import LaunchServicesCore

/// Who is on the other end of a connection, as declared in its hello. The daemon decides
/// the identity itself (never the caller's own claim); the role only says which
/// half of the protocol the peer speaks.
public enum PeerRole: String, Sendable, Equatable {
    /// A tool such as `lsopen` or `lsctl`, or any program asking for opens.
    case client
    /// An app the daemon launched, checking in on the connection handed to it as fd 3.
    case app
}

/// What the daemon tells an app about the URL that launches or reaches it; iOS's launch
/// options carry exactly these three values.
public struct Delivery: Sendable, Equatable {
    public var url: String
    public var sourceApplication: String
    public var annotation: PropertyListValue?
    /// Set when the URL breaks the callback rule and the daemon's callback policy is `flag`:
    /// why it would not have been delivered under `refuse` (CallbackProtection.swift).
    public var warning: String?
    /// Opened in the background: the app was not brought to the front for it.
    public var background: Bool
    /// The launch's own delivery, written at the app's hello before its launch methods were
    /// answered (`deliver` only; added in 0.4): an app whose launch method said NO must not
    /// run it, nor answer it.
    public var ofLaunch: Bool

    public init(url: String, sourceApplication: String, annotation: PropertyListValue? = nil, warning: String? = nil, background: Bool = false, ofLaunch: Bool = false) {
        self.url = url
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.warning = warning
        self.background = background
        self.ofLaunch = ofLaunch
    }
}

/// Every message of protocol version 1. The byte layout of each is in docs/PROTOCOL.md.
public enum Message: Sendable, Equatable {
    /// Peer → daemon, first frame of every connection. `bundlePath` is sent only by an app
    /// started by hand (not by the daemon), to declare itself; the daemon verifies it.
    /// `dropsVetoedLaunchDelivery` (an app, added in 0.4): the runtime drops a `deliver`
    /// marked `ofLaunch` after a NO from either launch method, so the daemon may write it at
    /// the hello.
    case hello(version: UInt64, role: PeerRole, program: String?, bundlePath: String? = nil, dropsVetoedLaunchDelivery: Bool = false)
    /// Daemon → peer: accepted; `identity` is the `sourceApplication` the daemon will use for it.
    case welcome(version: UInt64, identity: String)
    /// Daemon → peer: the request with this id failed (or, with id 0, the connection did).
    case failure(OpenError)
    /// Peer → daemon: open a URL. `returnTo` says the open returns control to that app (or
    /// tool identity); the daemon then refuses a URL that would open anywhere else.
    /// `options`: open in a given app, or in the background (fields added in 0.2; a daemon
    /// that does not know them ignores them).
    case open(url: String, annotation: PropertyListValue?, returnTo: String? = nil, options: OpenOptions = OpenOptions())
    /// Daemon → peer: how the open went.
    case openResult(OpenOutcome)
    /// Peer → daemon: is there a handler for this URL's scheme?
    case canOpen(url: String)
    /// Daemon → peer. `app` is given only to unrestricted clients (not to apps).
    case canOpenResult(canOpen: Bool, app: String?)
    /// Peer → daemon: reserve a callback address (`x-lsopen-callback://TOKEN`) for a caller
    /// that owns no scheme; the daemon answers `callbackAddress`, and later `callback`, both
    /// under this request's id.
    case awaitCallback
    /// Daemon → peer: the reserved address; append `/success`, `/error` or `/cancel`.
    case callbackAddress(url: String)
    /// Daemon → peer: someone opened the reserved address; the reservation is used up.
    case callback(url: String, sourceApplication: String)
    /// Peer → daemon: copy to, paste from or clear a pasteboard.
    case pasteboard(PasteboardRequest)
    /// Daemon → peer: the pasteboard after the request (for paste, the matching items).
    case pasteboardResult(PasteboardSnapshot)
    /// Peer → daemon: an inspection (`status`, `apps`, `running`).
    case query(topic: String)
    /// Daemon → peer: the inspection's or command's answer as a JSON document.
    case queryResult(json: String)
    /// Peer → daemon: an administrative command (`register`, `unregister`, `default`,
    /// `explain`); answered with `queryResult` or `failure`.
    case command(verb: String, arguments: [String])
    /// Daemon → app: run `willFinishLaunching` / `didFinishLaunching`, reply `phaseResult`.
    case launchMethod(LaunchPhase, Delivery)
    /// Daemon → app: deliver the URL (`open` or `handleOpen`), reply `phaseResult`.
    case deliver(Delivery)
    /// Daemon → app, one-way (id 0): a lifecycle notification.
    case notify(AppNotification)
    /// App → daemon: the delegate's answer to the phase with the same id.
    case phaseResult(accepted: Bool, method: DeliveryMethod?)

    /// The message's kind: its wire byte and its name, from one table (`MessageKind`).
    public var messageKind: MessageKind {
        switch self {
        case .hello: return .hello
        case .welcome: return .welcome
        case .failure: return .failure
        case .open: return .open
        case .openResult: return .openResult
        case .canOpen: return .canOpen
        case .canOpenResult: return .canOpenResult
        case .awaitCallback: return .awaitCallback
        case .callbackAddress: return .callbackAddress
        case .callback: return .callback
        case .pasteboard: return .pasteboard
        case .pasteboardResult: return .pasteboardResult
        case .query: return .query
        case .queryResult: return .queryResult
        case .command: return .command
        case .launchMethod: return .launchMethod
        case .deliver: return .deliver
        case .notify: return .notify
        case .phaseResult: return .phaseResult
        }
    }

    public var kind: UInt8 { messageKind.rawValue }
    public var kindName: String { messageKind.name }
}

extension Message {
    /// Messages a peer sends expecting an answer under its id (so the id must not be 0).
    public var isRequest: Bool {
        switch self {
        case .open, .canOpen, .query, .command, .awaitCallback, .pasteboard: return true
        default: return false
        }
    }
}

/// A message and its request id. Replies carry the id of the request they answer, so many
/// requests can be in flight on one connection; id 0 marks one-way messages.
public struct Envelope: Sendable, Equatable {
    public var id: UInt32
    public var message: Message

    public init(id: UInt32, _ message: Message) {
        self.id = id
        self.message = message
    }
}

/// Every message kind with its byte on the wire (PROTOCOL.md §6), the one table the
/// encoder, the decoder and error texts share.
public enum MessageKind: UInt8, CaseIterable, Sendable {
    case hello = 0x01, welcome = 0x02, failure = 0x03
    case open = 0x10, openResult = 0x11, canOpen = 0x12, canOpenResult = 0x13
    case awaitCallback = 0x14, callbackAddress = 0x15, callback = 0x16
    case query = 0x20, queryResult = 0x21, command = 0x22
    case launchMethod = 0x30, deliver = 0x31, notify = 0x32, phaseResult = 0x33
    case pasteboard = 0x40, pasteboardResult = 0x41

    /// The name PROTOCOL.md and error messages use (the case name).
    public var name: String { "\(self)" }
}
