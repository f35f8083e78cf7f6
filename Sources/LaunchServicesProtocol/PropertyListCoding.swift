import LaunchServicesCore

/// Property-list values on the wire: one field whose tag is the type.
/// 1 string, 2 integer (two's complement, 8 bytes), 3 real (IEEE 754 bits, 8 bytes),
/// 4 boolean, 5 data, 6 array (its elements as consecutive value fields),
/// 7 dictionary (pairs: a key field with tag 0x10, then a value field).
public enum PropertyListCoding {
    /// Nesting deeper than this is refused rather than recursed into.
    public static let maximumDepth = 32
}

extension WireWriter {
    public mutating func plist(_ value: PropertyListValue) {
        switch value {
        case .string(let s): field(1, string: s)
        case .integer(let i): field(2, u64: UInt64(bitPattern: i))
        case .real(let d): field(3, u64: d.bitPattern)
        case .boolean(let b): field(4, bool: b)
        case .data(let d): field(5, d)
        case .array(let items):
            nested(6) { w in for item in items { w.plist(item) } }
        case .dictionary(let entries):
            nested(7) { w in
                for (key, item) in entries {
                    w.field(0x10, string: key)
                    w.plist(item)
                }
            }
        }
    }
}

extension WireReader {
    public mutating func plist(depth: Int) throws(WireError) -> PropertyListValue {
        guard depth < PropertyListCoding.maximumDepth else { throw .invalid("annotation", "nested deeper than \(PropertyListCoding.maximumDepth) levels") }
        var (tag, value) = try field()
        switch tag {
        case 1: return .string(value.string)
        case 2: return .integer(Int64(bitPattern: try value.u64("annotation integer")))
        case 3: return .real(Double(bitPattern: try value.u64("annotation real")))
        case 4: return .boolean(try value.bool("annotation boolean"))
        case 5: return .data(value.bytes)
        case 6:
            var items: [PropertyListValue] = []
            while !value.isAtEnd { items.append(try value.plist(depth: depth + 1)) }
            return .array(items)
        case 7:
            var entries: [(String, PropertyListValue)] = []
            while !value.isAtEnd {
                let (keyTag, key) = try value.field()
                guard keyTag == 0x10 else { throw .invalid("annotation", "dictionary entry starts with tag \(keyTag), not a key (0x10)") }
                entries.append((key.string, try value.plist(depth: depth + 1)))
            }
            return .dictionary(entries)
        default:
            throw .invalid("annotation", "unknown property-list type tag \(tag)")
        }
    }
}
