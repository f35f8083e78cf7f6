import CSessionBus
import CSystemd
import LaunchServicesCore
import LaunchServicesProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The bus thread's server side: the name, the exported `org.freedesktop.Application` and
/// the project's interface (their vtables are C: `CSessionBus`), the incoming calls held until the loop answers them,
/// and the reconnection. Everything here runs on the bus thread.
extension SessionBusWorker {
    /// The loop asked for the server side: connect now (or export on the connection there is).
    func serve(_ wanted: SessionBusServer) {
        guard server == nil else { return }
        server = wanted
        retryDelay = wanted.firstRetryDelay
        if bus == nil {
            reconnect()
        } else {
            attachServer()
        }
    }

    /// Connects for the server; a failure is reported and tried again later.
    func reconnect() {
        retryAt = nil
        if let failure = connect() {
            scheduleRetry(.unreachable(failure, retry: retryDelay))
        }
    }

    private func scheduleRetry(_ event: SessionBusEvent) {
        guard let server else { return }
        retryAt = Monotonic.now() &+ Monotonic.nanoseconds(retryDelay)
        retryDelay = min(retryDelay * 2, server.maximumRetryDelay)
        server.report(event)
    }

    /// Exports the object, watches for callers leaving, and asks for the name, on the
    /// connection just made (sd-bus queues the messages until the bus accepted it).
    func attachServer() {
        guard let server, let bus else { return }
        var slot: OpaquePointer?
        var rc = ls_bus_add_application(bus, &slot, server.path, Self.callHandler, Unmanaged.passUnretained(self).toOpaque())
        if rc >= 0 {
            objectSlot = slot
            var service: OpaquePointer?
            rc = ls_bus_add_service(bus, &service, server.path, LaunchServicesBus.interface, LaunchServicesVersion.current, Self.serviceHandler,
                                    Unmanaged.passUnretained(self).toOpaque())
            if rc >= 0 { serviceSlot = service }
        }
        if rc >= 0 {
            // Floating slots (nil): they live and die with the connection.
            rc = sd_bus_match_signal_async(bus, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                           Self.nameOwnerChanged, nil, Unmanaged.passUnretained(self).toOpaque())
        }
        if rc >= 0 {
            // 0: no replacing, no queueing: the bus says at once whether the name is ours.
            rc = sd_bus_request_name_async(bus, nil, server.name, 0, Self.nameRequested, Unmanaged.passUnretained(self).toOpaque())
        }
        if rc < 0 {
            let failure = DBusCallFailure.invalidCall(reason: "cannot export \(server.path) or request \(server.name): \(DBusMethodCall.errorText(rc))")
            closeConnection(failing: failure)
        }
    }

    /// The connection is gone (or the thread stops): its incoming calls cannot be answered,
    /// the object goes with it; with a server and not stopping, the loss is reported.
    func detachServer(after failure: DBusCallFailure) {
        for message in incoming.values { sd_bus_message_unref(message) }
        incoming.removeAll()
        objectSlot = sd_bus_slot_unref(objectSlot)
        serviceSlot = sd_bus_slot_unref(serviceSlot)
        guard server != nil, bus != nil, failure != .stopping else { return }
        if ready, let server {
            // Lost after it worked: connect again at once, then back off as for a first try.
            retryDelay = server.firstRetryDelay
            retryAt = Monotonic.now()
            server.report(.lost(failure, retry: .zero))
        } else {
            scheduleRetry(.unreachable(failure, retry: retryDelay))
        }
    }

    /// The loop's answer to an incoming call; one already answered or whose connection
    /// ended finds nothing.
    func answer(_ reply: IncomingBusReply) {
        guard let message = incoming.removeValue(forKey: reply.id) else { return }
        defer { sd_bus_message_unref(message) }
        if let error = reply.error {
            // D-Bus strings cannot carry NUL; a message never should, but must not be cut.
            let text = error.message.replacingNULs()
            _ = ls_bus_reply_error(message, error.name, text)
        } else if reply.value == .none {
            _ = ls_bus_reply_empty(message)
        } else {
            var answer: OpaquePointer?
            var rc = sd_bus_message_new_method_return(message, &answer)
            if rc >= 0, let answer { rc = BusValueWriter.append(reply.value, to: answer) }
            if rc >= 0 { rc = sd_bus_send(nil, answer, nil) }
            sd_bus_message_unref(answer)
            if rc < 0 {
                // Still answered once: the caller learns why its answer did not come.
                _ = ls_bus_reply_error(message, LaunchServicesBus.errorName(.protocolError),
                                       "launchservicesd could not write its answer on D-Bus: \(DBusMethodCall.errorText(rc))")
            }
        }
    }

    /// `AppStateChanged` from the exported object, on a connection the bus accepted; with
    /// none it is dropped: a signal is for whoever listens now.
    func emit(_ signal: AppStateSignal) {
        guard let server, let bus, ready, serviceSlot != nil else { return }
        var message: OpaquePointer?
        var rc = sd_bus_message_new_signal(bus, &message, server.path, LaunchServicesBus.interface, LaunchServicesBus.appStateChangedSignal)
        if rc >= 0, let message {
            rc = signal.app.replacingNULs().withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            if rc >= 0 { rc = signal.state.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) } }
            var pid = signal.pid
            if rc >= 0 { rc = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &pid) }
            if rc >= 0 { rc = sd_bus_send(bus, message, nil) }
        }
        sd_bus_message_unref(message)
    }

    /// At the stop: every call still held is answered, by name.
    func refuseIncoming() {
        for id in incoming.keys.sorted() {
            answer(IncomingBusReply(id: id, error: (LaunchServicesBus.errorName(.unavailable), "launchservicesd is stopping; the call was not carried out")))
        }
    }

    private func took(_ message: OpaquePointer, member: Int32, uris: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, action: UnsafePointer<CChar>?) -> Int32 {
        let method: IncomingBusCall.Method
        switch Int(member) {
        case LS_APPLICATION_OPEN:
            var list: [String] = []
            var cursor = uris
            while let item = cursor?.pointee {
                list.append(String(cString: item))
                cursor = cursor?.successor()
            }
            method = .open(uris: list)
        case LS_APPLICATION_ACTIVATE_ACTION:
            method = .activateAction(name: action.map { String(cString: $0) } ?? "")
        default:
            method = .activate
        }
        return hold(message, method)
    }

    /// A call of the project's interface (`CSessionBus`'s `ls_service_call`).
    private func tookService(_ message: OpaquePointer, member: Int32, argument: UnsafePointer<CChar>?, options: UnsafePointer<ls_bus_option>?,
                             count: Int, total: Int) -> Int32 {
        let text = argument.map { String(cString: $0) } ?? ""
        let method: IncomingBusCall.Method
        switch Int(member) {
        case LS_SERVICE_OPEN:
            var read: [BusOption] = []
            for index in 0..<count {
                guard let option = options?[index], let key = option.key else { continue }
                let signature = option.signature.map { String(cString: $0) } ?? ""
                let value: BusOptionValue
                switch signature {
                case "s": value = .string(option.string.map { String(cString: $0) } ?? "")
                case "b": value = .boolean(option.boolean != 0)
                default: value = .other(signature: signature)
                }
                read.append(BusOption(key: String(cString: key), value: value))
            }
            method = .openURL(text, options: read, total: total)
        case LS_SERVICE_CAN_OPEN: method = .canOpen(text)
        case LS_SERVICE_EXPLAIN: method = .explain(text)
        case LS_SERVICE_APPS: method = .report(.apps)
        case LS_SERVICE_RUNNING: method = .report(.running)
        case LS_SERVICE_HISTORY: method = .report(.history)
        case LS_SERVICE_QUIT: method = .quit(text)
        default: return -EBADMSG
        }
        return hold(message, method)
    }

    /// Keeps the call (a reference on its message) under a fresh id until the loop answers
    /// it; past the bound it is answered at once, by name.
    private func hold(_ message: OpaquePointer, _ method: IncomingBusCall.Method) -> Int32 {
        guard let server else { return -ENOENT }
        guard let sender = sd_bus_message_get_sender(message).map({ String(cString: $0) }) else { return -EBADMSG }
        guard incoming.count < server.maximumIncomingCalls else {
            _ = ls_bus_reply_error(message, LaunchServicesBus.errorName(.unavailable),
                                   "launchservicesd holds \(server.maximumIncomingCalls) D-Bus calls not yet answered, its limit; try again when some are answered")
            return 1
        }
        nextIncoming += 1
        incoming[nextIncoming] = sd_bus_message_ref(message)
        server.report(.call(IncomingBusCall(id: nextIncoming, sender: sender, method: method)))
        return 1
    }

    private static let serviceHandler: ls_service_call = { message, context, member, argument, options, count, total in
        guard let message, let context else { return -EINVAL }
        return Unmanaged<SessionBusWorker>.fromOpaque(context).takeUnretainedValue()
            .tookService(message, member: member, argument: argument, options: options, count: count, total: total)
    }

    private static let callHandler: ls_application_call = { message, context, member, uris, action in
        guard let message, let context else { return -EINVAL }
        return Unmanaged<SessionBusWorker>.fromOpaque(context).takeUnretainedValue().took(message, member: member, uris: uris, action: action)
    }

    private static let nameRequested: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let worker = Unmanaged<SessionBusWorker>.fromOpaque(userdata).takeUnretainedValue()
        guard let server = worker.server else { return 0 }
        let address = worker.target.address
        if sd_bus_message_is_method_error(message, nil) > 0 {
            let error = sd_bus_message_get_error(message)
            let name = error?.pointee.name.map { String(cString: $0) } ?? "(no error name)"
            let text = error?.pointee.message.map { String(cString: $0) } ?? ""
            server.report(.nameRefused(address: address, reason: "the bus answered \(TerminalText.quoted(name)): \(TerminalText.quoted(text))"))
            return 1
        }
        var result: UInt32 = 0
        guard ls_bus_read_uint32(message, &result) >= 0 else { return 1 }
        worker.retryDelay = server.firstRetryDelay
        switch result {
        case 1, 4: server.report(.nameOwned(address: address))
        default: server.report(.nameRefused(address: address, reason: "another connection owns \(server.name) on this bus"))
        }
        return 1
    }

    private static let nameOwnerChanged: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let worker = Unmanaged<SessionBusWorker>.fromOpaque(userdata).takeUnretainedValue()
        var name: UnsafePointer<CChar>?
        var old: UnsafePointer<CChar>?
        var new: UnsafePointer<CChar>?
        guard ls_bus_read_name_owner_changed(message, &name, &old, &new) >= 0, let name, let new else { return 0 }
        // A unique name that lost its owner: that connection left the bus.
        if name.pointee == CChar(UInt8(ascii: ":")), new.pointee == 0 {
            worker.server?.report(.senderLeft(String(cString: name)))
        }
        return 0
    }
}

extension String {
    /// NUL, which D-Bus strings cannot carry, as U+FFFD.
    func replacingNULs() -> String {
        guard utf8.contains(0) else { return self }
        return String(unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : Character($0) })
    }
}
