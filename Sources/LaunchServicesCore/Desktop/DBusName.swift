/// D-Bus well-known bus names (`org.example.Mail`), checked by the D-Bus specification's
/// rules, and the object path the Desktop Entry specification derives from one.
///
/// The rules, each a named problem: not empty; at most 255 bytes; not a unique connection
/// name (those start with `:`); two or more elements separated by `.`, none empty (so no
/// leading, trailing or doubled `.`); each element only ASCII letters, digits, `_` and `-`,
/// and not starting with a digit (only unique names' elements may). GLib's
/// `g_dbus_is_name` (2.74) applies the same rules byte by byte, so a name with any
/// non-ASCII byte is refused too.
public enum DBusName {
    /// The specification's maximum length of a name, in bytes.
    public static let maximumLength = 255

    /// Why a string is not a well-known bus name; says what to change.
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        case empty
        case tooLong(bytes: Int)
        /// Starts with `:`: a unique connection name, which the bus assigns; nothing can be
        /// activated by it.
        case uniqueName
        /// Has no `.`: a name needs two or more elements.
        case oneElement
        /// Starts or ends with `.`, or has `..`: the element at `index` (0-based) is empty.
        case emptyElement(index: Int)
        /// The element at `index` starts with a digit.
        case elementStartsWithDigit(index: Int)
        /// A byte outside `[A-Za-z0-9_-]` (other than the `.` separators), at `offset`.
        case invalidByte(UInt8, offset: Int)

        public var description: String {
            switch self {
            case .empty:
                return "it is empty"
            case .tooLong(let bytes):
                return "it is \(bytes) bytes long; a bus name has at most \(DBusName.maximumLength)"
            case .uniqueName:
                return "it starts with ':', which only unique connection names do"
            case .oneElement:
                return "it has no '.'; a bus name has two or more elements, as in org.example.App"
            case .emptyElement(let index):
                return "element \(index + 1) is empty (a leading, trailing or doubled '.')"
            case .elementStartsWithDigit(let index):
                return "element \(index + 1) starts with a digit"
            case .invalidByte(let byte, let offset):
                let shown = byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16, uppercase: true)
                return "\(shown) at offset \(offset) is not allowed; elements hold only A-Z, a-z, 0-9, '_' and '-'"
            }
        }
    }

    /// The first rule `name` breaks as a well-known bus name, or `nil` when it is one.
    public static func problem(wellKnown name: String) -> Problem? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return .empty }
        if bytes.count > maximumLength { return .tooLong(bytes: bytes.count) }
        if bytes[0] == UInt8(ascii: ":") { return .uniqueName }
        var element = 0
        var elementStart = true
        for (offset, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: ".") {
                if elementStart { return .emptyElement(index: element) }
                element += 1
                elementStart = true
                continue
            }
            guard isElementByte(byte) else { return .invalidByte(byte, offset: offset) }
            if elementStart, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { return .elementStartsWithDigit(index: element) }
            elementStart = false
        }
        if elementStart { return .emptyElement(index: element) }
        if element == 0 { return .oneElement }
        return nil
    }

    public static func isWellKnown(_ name: String) -> Bool {
        problem(wellKnown: name) == nil
    }

    /// The object path of `org.freedesktop.Application` for a well-known name, by the
    /// Desktop Entry specification: `/` + the name with each `.` made `/` and each `-` made
    /// `_` (`org.example.my-app` → `/org/example/my_app`). For a valid name every element of
    /// the path is valid (`[A-Za-z0-9_]`, not empty).
    public static func objectPath(forWellKnown name: String) -> String {
        var path = "/"
        path.unicodeScalars.reserveCapacity(name.unicodeScalars.count + 1)
        for scalar in name.unicodeScalars {
            switch scalar {
            case ".": path.unicodeScalars.append("/")
            case "-": path.unicodeScalars.append("_")
            default: path.unicodeScalars.append(scalar)
            }
        }
        return path
    }

    private static func isElementByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
