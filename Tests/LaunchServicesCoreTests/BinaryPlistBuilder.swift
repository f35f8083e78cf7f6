/// Writes `bplist00` files object by object, including ones no encoder would write (cycles,
/// references out of range, bad trailers), for the bounds checker's tests.
struct BinaryPlistBuilder {
    enum Object {
        case string(String)
        case integer(UInt8)
        /// Bytes written as they are: a leaf whose marker may declare more than follows.
        case raw([UInt8])
        case array([Int])
        case dictionary([(key: Int, value: Int)])
    }

    var objects: [Object] = []
    var top = 0
    /// Bytes per reference and per offset; 4 unless a test needs another width.
    var referenceSize = 4
    var offsetSize = 4

    @discardableResult
    mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    /// The file; `trailer` may rewrite the 32-byte trailer before it is appended.
    func bytes(trailer edit: (inout [UInt8]) -> Void = { _ in }) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(out.count)
            switch object {
            case .string(let text):
                out += header(0x50, count: text.utf8.count) + Array(text.utf8)
            case .integer(let value):
                out += [0x10, value]
            case .raw(let bytes):
                out += bytes
            case .array(let elements):
                out += header(0xA0, count: elements.count)
                for element in elements { out += bigEndian(UInt64(element), size: referenceSize) }
            case .dictionary(let entries):
                out += header(0xD0, count: entries.count)
                for entry in entries { out += bigEndian(UInt64(entry.key), size: referenceSize) }
                for entry in entries { out += bigEndian(UInt64(entry.value), size: referenceSize) }
            }
        }
        let table = out.count
        for offset in offsets { out += bigEndian(UInt64(offset), size: offsetSize) }
        var trailer = [UInt8](repeating: 0, count: 6) + [UInt8(offsetSize), UInt8(referenceSize)]
        trailer += bigEndian(UInt64(objects.count), size: 8) + bigEndian(UInt64(top), size: 8) + bigEndian(UInt64(table), size: 8)
        edit(&trailer)
        return out + trailer
    }

    func header(_ marker: UInt8, count: Int) -> [UInt8] {
        count < 15 ? [marker | UInt8(count)] : [marker | 0x0F, 0x13] + bigEndian(UInt64(count), size: 8)
    }

    func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0 ..< size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
    }

    /// `levels` arrays, each holding the next; the innermost holds a string.
    static func nested(_ levels: Int) -> [UInt8] {
        var builder = BinaryPlistBuilder()
        for level in 0 ..< levels { builder.add(.array([level + 1])) }
        builder.add(.string("leaf"))
        return builder.bytes()
    }
}
