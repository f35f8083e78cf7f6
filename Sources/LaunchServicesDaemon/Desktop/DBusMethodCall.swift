import CSystemd
import LaunchServicesCore
#if canImport(Glibc)
import Glibc
#endif

/// One method call for the session bus, as plain values. The loop builds it; the bus thread
/// turns it into an sd-bus message (a message belongs to its bus and its thread) with
/// sd-bus's non-variadic calls (`sd_bus_message_append_basic`, `open_container`,
/// `close_container`), which are the ones Swift can call.
package struct DBusMethodCall: Sendable, Equatable {
    package var destination: String
    package var path: String
    package var interface: String
    package var member: String
    package var arguments: [DBusArgument]

    package init(destination: String, path: String, interface: String, member: String, arguments: [DBusArgument] = []) {
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// The argument types the daemon sends. More can be added with their signature and append.
package indirect enum DBusArgument: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case boolean(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case stringArray([String])
    /// `a{sv}` (a "vardict", as `platform_data`): each value in a variant of its own
    /// signature, in the order given.
    case variantDictionary([DBusDictionaryEntry])

    package var signature: String {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .boolean: return "b"
        case .int32: return "i"
        case .uint32: return "u"
        case .stringArray: return "as"
        case .variantDictionary: return "a{sv}"
        }
    }
}

package struct DBusDictionaryEntry: Sendable, Equatable {
    package var key: String
    package var value: DBusArgument

    package init(_ key: String, _ value: DBusArgument) {
        self.key = key
        self.value = value
    }
}

/// A successful reply, as far as the daemon reads it (on the bus thread, before its message
/// is freed): its signature, and for an `a{sv}` reply its `u` entries (what
/// `GetConnectionCredentials` answers: `ProcessID`, `UnixUserID`).
package struct DBusReply: Sendable, Equatable {
    package var signature: String
    package var unsignedEntries: [String: UInt32] = [:]

    package init(signature: String, unsignedEntries: [String: UInt32] = [:]) {
        self.signature = signature
        self.unsignedEntries = unsignedEntries
    }

    /// The `u` values of an `a{sv}` reply; other entries are skipped. Empty when the reply
    /// is something else or cannot be read.
    static func unsignedEntries(of message: OpaquePointer) -> [String: UInt32] {
        var entries: [String: UInt32] = [:]
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}") > 0 else { return entries }
        while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv") > 0 {
            var key: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &key) > 0, let key else { return entries }
            let name = String(cString: key)
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            guard sd_bus_message_peek_type(message, &type, &contents) > 0 else { return entries }
            if let contents, String(cString: contents) == "u" {
                guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), "u") > 0 else { return entries }
                var value: UInt32 = 0
                guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &value) > 0 else { return entries }
                entries[name] = value
                guard sd_bus_message_exit_container(message) >= 0 else { return entries }
            } else {
                guard sd_bus_message_skip(message, "v") >= 0 else { return entries }
            }
            guard sd_bus_message_exit_container(message) >= 0 else { return entries }
        }
        return entries
    }
}

extension DBusMethodCall {
    /// The first string D-Bus cannot carry (a NUL byte: sd-bus would see the string cut
    /// there), or `nil`. Invalid names and paths are sd-bus's to refuse.
    var unsendable: String? {
        for (name, value) in [("destination", destination), ("path", path), ("interface", interface), ("member", member)] where value.utf8.contains(0) {
            return "the \(name) contains a NUL byte"
        }
        for (index, argument) in arguments.enumerated() {
            if let problem = Self.unsendable(argument) { return "argument \(index + 1): \(problem)" }
        }
        return nil
    }

    private static func unsendable(_ argument: DBusArgument) -> String? {
        switch argument {
        case .string(let text), .objectPath(let text):
            return text.utf8.contains(0) ? "a string contains a NUL byte, which D-Bus strings cannot carry" : nil
        case .stringArray(let texts):
            return texts.contains { $0.utf8.contains(0) } ? "a string contains a NUL byte, which D-Bus strings cannot carry" : nil
        case .variantDictionary(let entries):
            for entry in entries {
                if entry.key.utf8.contains(0) { return "a key contains a NUL byte, which D-Bus strings cannot carry" }
                if let problem = unsendable(entry.value) { return problem }
            }
            return nil
        case .boolean, .int32, .uint32:
            return nil
        }
    }

    /// The message for this call on `bus` (the caller owns it and unrefs it), or why sd-bus
    /// refused to build it.
    func message(on bus: OpaquePointer) -> Result<OpaquePointer, DBusCallFailure> {
        if let problem = unsendable { return .failure(.invalidCall(reason: problem)) }
        var message: OpaquePointer?
        var rc = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard rc >= 0, let message else {
            return .failure(.invalidCall(reason: "sd-bus refused the destination \(TerminalText.quoted(destination)), path \(TerminalText.quoted(path)), interface \(TerminalText.quoted(interface)) or member \(TerminalText.quoted(member)): \(Self.errorText(rc))"))
        }
        for (index, argument) in arguments.enumerated() {
            rc = Self.append(argument, to: message)
            if rc < 0 {
                sd_bus_message_unref(message)
                return .failure(.invalidCall(reason: "argument \(index + 1) (\(argument.signature)) cannot be sent: \(Self.errorText(rc))"))
            }
        }
        return .success(message)
    }

    private static func append(_ argument: DBusArgument, to m: OpaquePointer) -> Int32 {
        switch argument {
        case .string(let text):
            return text.withCString { sd_bus_message_append_basic(m, type("s"), $0) }
        case .objectPath(let text):
            return text.withCString { sd_bus_message_append_basic(m, type("o"), $0) }
        case .boolean(let flag):
            // sd-bus reads a boolean as a C int.
            var value: Int32 = flag ? 1 : 0
            return sd_bus_message_append_basic(m, type("b"), &value)
        case .int32(var value):
            return sd_bus_message_append_basic(m, type("i"), &value)
        case .uint32(var value):
            return sd_bus_message_append_basic(m, type("u"), &value)
        case .stringArray(let texts):
            var rc = sd_bus_message_open_container(m, type("a"), "s")
            for text in texts where rc >= 0 {
                rc = text.withCString { sd_bus_message_append_basic(m, type("s"), $0) }
            }
            return rc >= 0 ? sd_bus_message_close_container(m) : rc
        case .variantDictionary(let entries):
            var rc = sd_bus_message_open_container(m, type("a"), "{sv}")
            for entry in entries where rc >= 0 {
                rc = sd_bus_message_open_container(m, type("e"), "sv")
                if rc >= 0 { rc = entry.key.withCString { sd_bus_message_append_basic(m, type("s"), $0) } }
                if rc >= 0 { rc = sd_bus_message_open_container(m, type("v"), entry.value.signature) }
                if rc >= 0 { rc = append(entry.value, to: m) }
                if rc >= 0 { rc = sd_bus_message_close_container(m) } // v
                if rc >= 0 { rc = sd_bus_message_close_container(m) } // e
            }
            return rc >= 0 ? sd_bus_message_close_container(m) : rc
        }
    }

    private static func type(_ code: Unicode.Scalar) -> CChar {
        CChar(UInt8(ascii: code))
    }

    static func errorText(_ rc: Int32) -> String {
        String(cString: strerror(-rc))
    }
}
