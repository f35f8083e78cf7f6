import CSystemd
import LaunchServicesCore

/// Writes the daemon's answers (JSON reports read as property-list values) into a D-Bus
/// message, with sd-bus's non-variadic calls (its `append` is variadic, which Swift cannot
/// call). On the bus thread only, like the message.
///
/// The mapping, documented in the README with the interface: a dictionary is `a{sv}`, each
/// value a variant of: a string `s`, an integer (a JSON number without fraction or exponent)
/// `x`, any other number `d`, a boolean `b`, an array `av`, a dictionary `a{sv}`, bytes `ay`
/// (never in a JSON report). A JSON `null` is left out with its key (`PropertyListJSON`'s
/// `omittingNulls`). `av` rather than a typed array: a JSON array may mix types, and an
/// empty one has none to choose.
enum BusValueWriter {
    /// Appends the method return's value; a negative errno when sd-bus refused it.
    static func append(_ value: BusReplyValue, to m: OpaquePointer) -> Int32 {
        switch value {
        case .none:
            return 0
        case .boolean(let flag):
            var b: Int32 = flag ? 1 : 0
            return sd_bus_message_append_basic(m, type("b"), &b)
        case .dictionary(let entries):
            return appendDictionary(entries, to: m)
        case .dictionaries(let list):
            var rc = sd_bus_message_open_container(m, type("a"), "a{sv}")
            for entries in list where rc >= 0 { rc = appendDictionary(entries, to: m) }
            return rc >= 0 ? sd_bus_message_close_container(m) : rc
        }
    }

    static func appendDictionary(_ entries: [(String, PropertyListValue)], to m: OpaquePointer) -> Int32 {
        var rc = sd_bus_message_open_container(m, type("a"), "{sv}")
        for (key, value) in entries where rc >= 0 {
            rc = sd_bus_message_open_container(m, type("e"), "sv")
            if rc >= 0 { rc = key.replacingNULs().withCString { sd_bus_message_append_basic(m, type("s"), $0) } }
            if rc >= 0 { rc = appendVariant(value, to: m) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
        }
        return rc >= 0 ? sd_bus_message_close_container(m) : rc
    }

    private static func appendVariant(_ value: PropertyListValue, to m: OpaquePointer) -> Int32 {
        var rc = sd_bus_message_open_container(m, type("v"), signature(of: value))
        guard rc >= 0 else { return rc }
        switch value {
        case .string(let text):
            rc = text.replacingNULs().withCString { sd_bus_message_append_basic(m, type("s"), $0) }
        case .integer(var number):
            rc = sd_bus_message_append_basic(m, type("x"), &number)
        case .real(var number):
            rc = sd_bus_message_append_basic(m, type("d"), &number)
        case .boolean(let flag):
            var b: Int32 = flag ? 1 : 0
            rc = sd_bus_message_append_basic(m, type("b"), &b)
        case .data(let bytes):
            rc = sd_bus_message_open_container(m, type("a"), "y")
            for var byte in bytes where rc >= 0 { rc = sd_bus_message_append_basic(m, type("y"), &byte) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
        case .array(let items):
            rc = sd_bus_message_open_container(m, type("a"), "v")
            for item in items where rc >= 0 { rc = appendVariant(item, to: m) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
        case .dictionary(let entries):
            rc = appendDictionary(entries, to: m)
        }
        return rc >= 0 ? sd_bus_message_close_container(m) : rc
    }

    private static func signature(of value: PropertyListValue) -> String {
        switch value {
        case .string: return "s"
        case .integer: return "x"
        case .real: return "d"
        case .boolean: return "b"
        case .data: return "ay"
        case .array: return "av"
        case .dictionary: return "a{sv}"
        }
    }

    private static func type(_ letter: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: letter)) }
}
