import LaunchServicesCore

extension Envelope {
    /// Writes `kind`, `id` and the message's fields (the body of a frame).
    public func encode(into w: inout WireWriter) {
        w.u8(message.kind)
        w.u32(id)
        switch message {
        case .hello(let version, let role, let program, let bundlePath, let dropsVetoedLaunchDelivery):
            w.field(1, u64: version)
            w.field(2, string: role.rawValue)
            if let program { w.field(3, string: program) }
            if let bundlePath { w.field(4, string: bundlePath) }
            if dropsVetoedLaunchDelivery { w.field(5, bool: true) }
        case .welcome(let version, let identity):
            w.field(1, u64: version)
            w.field(2, string: identity)
        case .failure(let error):
            w.field(1, string: error.code.rawValue)
            w.field(2, string: error.message)
            if let phase = error.phase { w.field(3, string: phase.rawValue) }
        case .open(let url, let annotation, let returnTo, let options):
            w.field(1, string: url)
            if let annotation { w.nested(2) { $0.plist(annotation) } }
            if let returnTo { w.field(3, string: returnTo) }
            if let app = options.app { w.field(4, string: app) }
            if options.background { w.field(5, bool: true) }
        case .openResult(let outcome):
            w.field(1, bool: outcome.opened)
            if let app = outcome.app { w.field(2, string: app) }
            if let error = outcome.error {
                w.field(3, string: error.code.rawValue)
                w.field(4, string: error.message)
                if let phase = error.phase { w.field(5, string: phase.rawValue) }
            }
            if let method = outcome.method { w.field(6, string: method.rawValue) }
            w.field(7, bool: outcome.launched)
            for timing in outcome.timings {
                w.nested(8) {
                    $0.field(1, string: timing.phase.rawValue)
                    $0.field(2, u64: timing.nanoseconds)
                }
            }
            if let state = outcome.launchState { w.field(9, string: state.rawValue) }
            if let total = outcome.totalNanoseconds { w.field(10, u64: total) }
            if let kind = outcome.handlerKind { w.field(11, string: kind.rawValue) }
            if let desktop = outcome.desktop {
                w.field(12, string: desktop.kind.rawValue)
                if let pid = desktop.pid { w.field(13, u64: UInt64(UInt32(bitPattern: pid))) }
                switch desktop.exitStatus {
                case .exited(let status)?: w.field(14, u64: UInt64(UInt32(bitPattern: status)))
                case .signaled(let signal)?: w.field(15, u64: UInt64(UInt32(bitPattern: signal)))
                case nil: break
                }
                for line in desktop.stderrTail { w.field(16, string: line) }
            }
        case .canOpen(let url):
            w.field(1, string: url)
        case .canOpenResult(let canOpen, let app):
            w.field(1, bool: canOpen)
            if let app { w.field(2, string: app) }
        case .awaitCallback:
            break
        case .callbackAddress(let url):
            w.field(1, string: url)
        case .callback(let url, let source):
            w.field(1, string: url)
            w.field(2, string: source)
        case .pasteboard(let request):
            w.field(1, string: request.operation.rawValue)
            if let name = request.name { w.field(2, string: name) }
            for item in request.items { w.item(item) }
            if let type = request.type { w.field(4, string: type) }
            if let password = request.password { w.field(5, string: password) }
            if let seconds = request.expireSeconds { w.field(6, u64: seconds) }
            if request.persistent { w.field(7, bool: true) }
        case .pasteboardResult(let snapshot):
            w.field(1, string: snapshot.name)
            w.field(2, u64: snapshot.changeCount)
            for item in snapshot.items { w.item(item) }
            if let seconds = snapshot.expiresInSeconds { w.field(4, u64: seconds) }
            w.field(5, bool: snapshot.persistent)
            w.field(6, bool: snapshot.passwordProtected)
        case .query(let topic):
            w.field(1, string: topic)
        case .queryResult(let json):
            w.field(1, string: json)
        case .command(let verb, let arguments):
            w.field(1, string: verb)
            for argument in arguments { w.field(2, string: argument) }
        case .launchMethod(let phase, let delivery):
            w.field(1, string: phase.rawValue)
            w.delivery(delivery)
        case .deliver(let delivery):
            w.delivery(delivery)
        case .notify(let notification):
            w.field(1, string: notification.rawValue)
        case .phaseResult(let accepted, let method):
            w.field(1, bool: accepted)
            if let method { w.field(2, string: method.rawValue) }
        }
    }

    /// Decodes a frame body (without its length prefix).
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Envelope {
        var r = WireReader(body)
        let kind = try r.u8()
        let id = try r.u32()
        // Room for most messages' fields (an open's answer has eight); more grow the list.
        var f = Fields(capacity: 12)
        while !r.isAtEnd {
            let (tag, value) = try r.field()
            f.append(tag, value)
        }
        guard let messageKind = MessageKind(rawValue: kind) else { throw .unknownKind(kind) }
        let message: Message
        switch messageKind {
        case .hello:
            let roleText = try f.string(2, "hello", "role")
            guard let role = PeerRole(rawValue: roleText) else { throw .invalid("role", "'\(roleText)' is neither 'client' nor 'app'") }
            message = .hello(version: try f.u64(1, "hello", "version"), role: role, program: f.optionalString(3), bundlePath: f.optionalString(4),
                             dropsVetoedLaunchDelivery: try f.optionalBool(5, "dropsVetoedLaunchDelivery") ?? false)
        case .welcome:
            message = .welcome(version: try f.u64(1, "welcome", "version"), identity: try f.string(2, "welcome", "identity"))
        case .failure:
            message = .failure(OpenError(
                try f.enumValue(1, "failure", "code"), phase: try f.optionalEnum(3, "phase"),
                try f.string(2, "failure", "message")))
        case .open:
            message = .open(url: try f.string(1, "open", "url"), annotation: try f.optionalPlist(2), returnTo: f.optionalString(3),
                            options: OpenOptions(app: f.optionalString(4), background: try f.optionalBool(5, "background") ?? false))
        case .openResult:
            var timings: [PhaseTiming] = []
            for value in f.all(8) {
                var g = Fields(capacity: 2)
                var nested = value
                while !nested.isAtEnd {
                    let (tag, v) = try nested.field()
                    g.append(tag, v)
                }
                timings.append(PhaseTiming(phase: try g.enumValue(1, "timing", "phase"), nanoseconds: try g.u64(2, "timing", "nanoseconds")))
            }
            let opened = try f.bool(1, "openResult", "opened")
            var error: OpenError?
            if !opened {
                error = OpenError(try f.enumValue(3, "openResult", "code"), phase: try f.optionalEnum(5, "phase"), try f.string(4, "openResult", "message"))
            }
            message = .openResult(OpenOutcome(
                app: f.optionalString(2), error: error, launched: try f.optionalBool(7, "launched") ?? false,
                method: try f.optionalEnum(6, "method"), timings: timings,
                launchState: try f.optionalEnum(9, "launchState"), totalNanoseconds: try f.optionalU64(10, "totalNanoseconds"),
                handlerKind: try f.optionalEnum(11, "handlerKind"), desktop: try f.desktopOutcome()))
        case .canOpen:
            message = .canOpen(url: try f.string(1, "canOpen", "url"))
        case .canOpenResult:
            message = .canOpenResult(canOpen: try f.bool(1, "canOpenResult", "canOpen"), app: f.optionalString(2))
        case .awaitCallback:
            message = .awaitCallback
        case .callbackAddress:
            message = .callbackAddress(url: try f.string(1, "callbackAddress", "url"))
        case .callback:
            message = .callback(url: try f.string(1, "callback", "url"), sourceApplication: try f.string(2, "callback", "sourceApplication"))
        case .pasteboard:
            var request = PasteboardRequest(try f.enumValue(1, "pasteboard", "operation"))
            request.name = f.optionalString(2)
            request.items = try f.items("pasteboard")
            request.type = f.optionalString(4)
            request.password = f.optionalString(5)
            request.expireSeconds = try f.optionalU64(6, "expireSeconds")
            request.persistent = try f.optionalBool(7, "persistent") ?? false
            message = .pasteboard(request)
        case .pasteboardResult:
            message = .pasteboardResult(PasteboardSnapshot(
                name: try f.string(1, "pasteboardResult", "name"), changeCount: try f.u64(2, "pasteboardResult", "changeCount"),
                items: try f.items("pasteboardResult"), expiresInSeconds: try f.optionalU64(4, "expiresInSeconds"),
                persistent: try f.optionalBool(5, "persistent") ?? false, passwordProtected: try f.optionalBool(6, "passwordProtected") ?? false))
        case .query:
            message = .query(topic: try f.string(1, "query", "topic"))
        case .queryResult:
            message = .queryResult(json: try f.string(1, "queryResult", "json"))
        case .command:
            message = .command(verb: try f.string(1, "command", "verb"), arguments: f.all(2).map(\.string))
        case .launchMethod:
            message = .launchMethod(try f.enumValue(1, "launchMethod", "phase"), try f.delivery("launchMethod"))
        case .deliver:
            message = .deliver(try f.delivery("deliver"))
        case .notify:
            message = .notify(try f.enumValue(1, "notify", "notification"))
        case .phaseResult:
            message = .phaseResult(accepted: try f.bool(1, "phaseResult", "accepted"), method: try f.optionalEnum(2, "method"))
        }
        return Envelope(id: id, message)
    }

    public static func decode(_ body: [UInt8]) throws(WireError) -> Envelope {
        do {
            return try body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Envelope in try decode(raw) }
        } catch let error as WireError {
            throw error
        } catch {
            throw .invalid("body", "\(error)")
        }
    }
}

/// The fields of one message, by tag. Unknown tags are kept and ignored, so a newer peer
/// may add optional fields without breaking an older one.
struct Fields {
    /// One field. A struct, not a `(UInt8, WireReader)` tuple: an array of tuples has its
    /// metadata built at run time from a mangled name, a first-use cost every app's launch
    /// and every `lsopen` paid.
    private struct Entry {
        let tag: UInt8
        let value: WireReader
    }

    private var entries: [Entry]

    /// Room for `capacity` fields made at once: grown from empty one append at a time, an
    /// open's answer (eight fields) cost four reallocations of the list, a third of what
    /// the client spends decoding it.
    init(capacity: Int) {
        entries = []
        entries.reserveCapacity(capacity)
    }

    mutating func append(_ tag: UInt8, _ value: WireReader) { entries.append(Entry(tag: tag, value: value)) }
    func first(_ tag: UInt8) -> WireReader? { entries.first { $0.tag == tag }?.value }
    /// Every field with `tag`, in order: gathered in one pass into one list (a filter then
    /// a map made two, on every open's answer, for its phase timings).
    func all(_ tag: UInt8) -> [WireReader] {
        var found: [WireReader] = []
        for entry in entries where entry.tag == tag { found.append(entry.value) }
        return found
    }

    func string(_ tag: UInt8, _ kind: String, _ name: String) throws(WireError) -> String {
        guard let v = first(tag) else { throw .missingField(kind: kind, field: name) }
        return v.string
    }
    func optionalString(_ tag: UInt8) -> String? { first(tag)?.string }
    func u64(_ tag: UInt8, _ kind: String, _ name: String) throws(WireError) -> UInt64 {
        guard let v = first(tag) else { throw .missingField(kind: kind, field: name) }
        return try v.u64(name)
    }
    func bool(_ tag: UInt8, _ kind: String, _ name: String) throws(WireError) -> Bool {
        guard let v = first(tag) else { throw .missingField(kind: kind, field: name) }
        return try v.bool(name)
    }
    func optionalU64(_ tag: UInt8, _ name: String) throws(WireError) -> UInt64? {
        guard let v = first(tag) else { return nil }
        return try v.u64(name)
    }
    /// Tag 3 of pasteboard messages, repeated: each a nested `1 type`, `2 data`.
    func items(_ kind: String) throws(WireError) -> [PasteboardItem] {
        var items: [PasteboardItem] = []
        for value in all(3) {
            var g = Fields(capacity: 2)
            var nested = value
            while !nested.isAtEnd {
                let (tag, v) = try nested.field()
                g.append(tag, v)
            }
            guard let data = g.first(2) else { throw .missingField(kind: kind, field: "item.data") }
            items.append(PasteboardItem(type: try g.string(1, kind, "item.type"), data: data.bytes))
        }
        return items
    }
    func optionalBool(_ tag: UInt8, _ name: String) throws(WireError) -> Bool? {
        guard let v = first(tag) else { return nil }
        return try v.bool(name)
    }
    func enumValue<E: RawRepresentable<String>>(_ tag: UInt8, _ kind: String, _ name: String) throws(WireError) -> E {
        let text = try string(tag, kind, name)
        guard let value = E(rawValue: text) else { throw .invalid(name, "unknown value '\(text)'") }
        return value
    }
    func optionalEnum<E: RawRepresentable<String>>(_ tag: UInt8, _ name: String) throws(WireError) -> E? {
        guard let text = optionalString(tag) else { return nil }
        guard let value = E(rawValue: text) else { throw .invalid(name, "unknown value '\(text)'") }
        return value
    }
    /// Tags 12–16 of `openResult` (added in 0.3): a desktop app's launch; nil without tag 12.
    func desktopOutcome() throws(WireError) -> DesktopLaunchOutcome? {
        guard let kind: DesktopLaunchOutcome.Kind = try optionalEnum(12, "desktopOutcome") else { return nil }
        func int32(_ tag: UInt8, _ name: String) throws(WireError) -> Int32? {
            guard let value = try optionalU64(tag, name) else { return nil }
            guard value <= UInt64(Int32.max) else { throw .invalid(name, "\(value) is larger than \(Int32.max)") }
            return Int32(value)
        }
        var status: ExitStatus?
        if let code = try int32(14, "exitStatus") { status = .exited(code) } else if let signal = try int32(15, "signal") { status = .signaled(signal) }
        return DesktopLaunchOutcome(kind: kind, pid: try int32(13, "pid"), exitStatus: status, stderrTail: all(16).map(\.string))
    }
    func optionalPlist(_ tag: UInt8) throws(WireError) -> PropertyListValue? {
        guard var v = first(tag) else { return nil }
        let value = try v.plist(depth: 0)
        guard v.isAtEnd else { throw .invalid("annotation", "trailing bytes after the value") }
        return value
    }
    func delivery(_ kind: String) throws(WireError) -> Delivery {
        Delivery(url: try string(2, kind, "url"), sourceApplication: try string(3, kind, "sourceApplication"), annotation: try optionalPlist(4), warning: optionalString(5),
                 background: try optionalBool(6, "background") ?? false, ofLaunch: try optionalBool(7, "ofLaunch") ?? false)
    }
}

extension WireWriter {
    mutating func delivery(_ d: Delivery) {
        field(2, string: d.url)
        field(3, string: d.sourceApplication)
        if let annotation = d.annotation { nested(4) { $0.plist(annotation) } }
        if let warning = d.warning { field(5, string: warning) }
        if d.background { field(6, bool: true) }
        if d.ofLaunch { field(7, bool: true) }
    }

    mutating func item(_ item: PasteboardItem) {
        nested(3) {
            $0.field(1, string: item.type)
            $0.field(2, item.data)
        }
    }
}
