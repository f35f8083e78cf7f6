import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// A transient scope of the systemd user manager for a process started elsewhere: what a
/// desktop environment does for each app it launches (systemd's "Desktop Environments"
/// note: `app-<launcher>-<ApplicationID>-<RANDOM>.scope` in `app.slice`), so the app has a
/// control group of its own, outlives its launcher's service, and is found by its name.
///
/// It speaks to the manager over its private socket, `$XDG_RUNTIME_DIR/systemd/private`: a
/// peer-to-peer D-Bus connection (no bus daemon, no `Hello`), as `systemctl --user` does, so
/// no session bus is needed. `StartTransientUnit` on `org.freedesktop.systemd1.Manager`.
///
/// sd-bus is not thread-safe: `start` makes its own connection, uses it and frees it on the
/// calling thread, and blocks up to its timeout; call it on a thread or queue of its own,
/// never on an event loop.
public enum TransientScope {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// systemd's limit on a unit name's length.
    static let maximumNameLength = 255

    /// `app-LAUNCHER-APPID-RANDOM.scope`, the application ID escaped as systemd escapes a
    /// unit name component (every byte but `[A-Za-z0-9:_.]`, and a leading `.`, as `\xHH`,
    /// so the ID's own `-` cannot be mistaken for a separator), cut to keep the name within
    /// systemd's 255 bytes. `random` is written as 16 hex digits.
    public static func unitName(launcher: String, appID: String, random: UInt64) -> String {
        let prefix = "app-" + escape(launcher) + "-"
        var randomHex = String(random, radix: 16)
        randomHex = String(repeating: "0", count: 16 - randomHex.count) + randomHex
        let suffix = "-" + randomHex + ".scope"
        var id = escape(appID)
        let room = maximumNameLength - prefix.utf8.count - suffix.utf8.count
        if id.utf8.count > room {
            // Cut on a whole escape: never in the middle of `\xHH`.
            var cut = Array(id.utf8.prefix(room))
            if let slash = cut.lastIndex(of: 0x5C), cut.count - slash < 4 { cut.removeSubrange(slash...) }
            id = String(decoding: cut, as: UTF8.self)
        }
        return prefix + id + suffix
    }

    static func escape(_ text: String) -> String {
        var out = ""
        let hex = Array("0123456789abcdef".utf8)
        for (index, byte) in text.utf8.enumerated() {
            let plain = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x3A || byte == 0x5F || (byte == 0x2E && index > 0)
            if plain {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += "\\x"
                out.unicodeScalars.append(UnicodeScalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(UnicodeScalar(hex[Int(byte & 0xF)]))
            }
        }
        return out
    }

    /// The user manager's private socket in `runtimeDirectory`.
    public static func socketPath(runtimeDirectory: String) -> String {
        runtimeDirectory + "/systemd/private"
    }

    /// Whether a user manager listens there (its socket exists); outside systemd it does not.
    public static func userManagerIsPresent(runtimeDirectory: String) -> Bool {
        var info = stat()
        return stat(socketPath(runtimeDirectory: runtimeDirectory), &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// A D-Bus address for a socket path: bytes outside `[-0-9A-Za-z_/.*]` are `%XX`.
    public static func address(socketPath: String) -> String {
        var out = "unix:path="
        let hex = Array("0123456789abcdef".utf8)
        for byte in socketPath.utf8 {
            let plain = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x5F || byte == 0x2F || byte == 0x2E || byte == 0x2A
            if plain {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += "%"
                out.unicodeScalars.append(UnicodeScalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(UnicodeScalar(hex[Int(byte & 0xF)]))
            }
        }
        return out
    }

    /// Asks the manager at `address` to start scope `name` holding `pids`, in `slice`.
    /// Returns the job's object path once the manager accepted it (the processes move into
    /// the scope as the job runs, a moment later). Blocks at most `timeoutMicroseconds`.
    public static func start(name: String, description: String, slice: String?, pids: [Int32], address: String, timeoutMicroseconds: UInt64) throws(Failure) -> String {
        var bus: OpaquePointer?
        var rc = sd_bus_new(&bus)
        guard rc >= 0, let bus else { throw Failure("sd_bus_new: \(errorText(rc))") }
        defer { sd_bus_flush_close_unref(bus) }
        rc = sd_bus_set_address(bus, address)
        guard rc >= 0 else { throw Failure("the user manager's address \(address): \(errorText(rc))") }
        rc = sd_bus_start(bus)
        guard rc >= 0 else { throw Failure("cannot connect to the user manager at \(address): \(errorText(rc))") }

        var message: OpaquePointer?
        rc = sd_bus_message_new_method_call(bus, &message, "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StartTransientUnit")
        guard rc >= 0, let message else { throw Failure("cannot build StartTransientUnit: \(errorText(rc))") }
        defer { sd_bus_message_unref(message) }
        rc = build(message, name: name, description: description, slice: slice, pids: pids)
        guard rc >= 0 else { throw Failure("cannot build StartTransientUnit: \(errorText(rc))") }

        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        rc = sd_bus_call(bus, message, timeoutMicroseconds, &error, &reply)
        defer { if let reply { sd_bus_message_unref(reply) } }
        guard rc >= 0 else {
            if let errorName = error.name {
                let text = error.message.map { String(cString: $0) } ?? ""
                throw Failure("the user manager refused \(name): \(String(cString: errorName)): \(text)")
            }
            throw Failure("StartTransientUnit \(name): \(errorText(rc))")
        }
        var job: UnsafePointer<CChar>?
        guard let reply, sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "o")), &job) >= 0, let job else { return "" }
        return String(cString: job)
    }

    /// `ssa(sv)a(sa(sv))`: name, mode `fail`, the properties, no auxiliary units.
    private static func build(_ m: OpaquePointer, name: String, description: String, slice: String?, pids: [Int32]) -> Int32 {
        var rc = appendString(m, "s", name)
        if rc >= 0 { rc = appendString(m, "s", "fail") }
        if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "a")), "(sv)") }
        var strings = [("Description", description), ("CollectMode", "inactive-or-failed")]
        if let slice { strings.append(("Slice", slice)) }
        for (key, value) in strings where rc >= 0 {
            rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "r")), "sv")
            if rc >= 0 { rc = appendString(m, "s", key) }
            if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "v")), "s") }
            if rc >= 0 { rc = appendString(m, "s", value) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
        }
        if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "r")), "sv") }
        if rc >= 0 { rc = appendString(m, "s", "PIDs") }
        if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "v")), "au") }
        if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "a")), "u") }
        for pid in pids where rc >= 0 {
            var value = UInt32(bitPattern: pid)
            rc = sd_bus_message_append_basic(m, CChar(UInt8(ascii: "u")), &value)
        }
        for _ in 0..<4 where rc >= 0 { rc = sd_bus_message_close_container(m) } // a, v, r, a(sv)
        if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "a")), "(sa(sv))") }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        return rc
    }

    private static func appendString(_ m: OpaquePointer, _ type: Character, _ value: String) -> Int32 {
        value.withCString { sd_bus_message_append_basic(m, CChar(type.asciiValue!), $0) }
    }

    private static func errorText(_ rc: Int32) -> String {
        String(cString: strerror(-rc))
    }
}
