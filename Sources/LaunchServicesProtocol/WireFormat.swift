/// The byte-level building blocks of the protocol (docs/PROTOCOL.md): big-endian integers
/// and tag-length-value fields. Pure Swift on byte arrays, so the same code serves the NIO
/// daemon and the Foundation-free clients and apps.
public struct WireWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }

    public mutating func u32(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    /// Overwrites the four bytes at `offset` with `v` (big-endian): a length prefix written
    /// once what it counts is known.
    public mutating func patchU32(at offset: Int, _ v: UInt32) {
        bytes[offset] = UInt8(truncatingIfNeeded: v >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: v >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: v >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: v)
    }

    public mutating func u64(_ v: UInt64) {
        u32(UInt32(truncatingIfNeeded: v >> 32))
        u32(UInt32(truncatingIfNeeded: v))
    }

    /// A field: `u8 tag`, `u32 length`, the bytes.
    public mutating func field(_ tag: UInt8, _ payload: some Collection<UInt8>) {
        u8(tag)
        u32(UInt32(payload.count))
        bytes.append(contentsOf: payload)
    }

    public mutating func field(_ tag: UInt8, string: String) { field(tag, string.utf8) }
    public mutating func field(_ tag: UInt8, bool: Bool) { field(tag, CollectionOfOne(bool ? 1 : 0)) }

    public mutating func field(_ tag: UInt8, u64 v: UInt64) {
        u8(tag)
        u32(8)
        u64(v)
    }

    /// A field whose payload is written by `body` (nested fields), length patched afterwards.
    public mutating func nested(_ tag: UInt8, _ body: (inout WireWriter) -> Void) {
        u8(tag)
        let lengthAt = bytes.count
        u32(0)
        body(&self)
        let length = UInt32(bytes.count - lengthAt - 4)
        bytes[lengthAt] = UInt8(truncatingIfNeeded: length >> 24)
        bytes[lengthAt + 1] = UInt8(truncatingIfNeeded: length >> 16)
        bytes[lengthAt + 2] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[lengthAt + 3] = UInt8(truncatingIfNeeded: length)
    }
}

/// Reads what `WireWriter` wrote, bounds-checked: malformed input is an error, never a trap.
public struct WireReader {
    let base: UnsafeRawBufferPointer
    public private(set) var offset: Int

    public init(_ base: UnsafeRawBufferPointer) {
        self.base = base
        offset = 0
    }

    public var isAtEnd: Bool { offset >= base.count }
    public var remaining: Int { base.count - offset }

    public mutating func u8() throws(WireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated("byte at offset \(offset)") }
        defer { offset += 1 }
        return base[offset]
    }

    public mutating func u32() throws(WireError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated("32-bit integer at offset \(offset)") }
        defer { offset += 4 }
        return UInt32(base[offset]) << 24 | UInt32(base[offset + 1]) << 16 | UInt32(base[offset + 2]) << 8 | UInt32(base[offset + 3])
    }

    /// The next field: its tag and a reader over exactly its payload.
    public mutating func field() throws(WireError) -> (tag: UInt8, value: WireReader) {
        let tag = try u8()
        let length = Int(try u32())
        guard remaining >= length else { throw .truncated("field \(tag) declares \(length) bytes, \(remaining) remain") }
        let value = WireReader(UnsafeRawBufferPointer(rebasing: base[offset..<(offset + length)]))
        offset += length
        return (tag, value)
    }

    public var string: String { String(decoding: base, as: UTF8.self) }
    public var bytes: [UInt8] { Array(base) }

    public func bool(_ name: String) throws(WireError) -> Bool {
        guard base.count == 1, base[0] <= 1 else { throw .invalid(name, "a boolean is one byte, 0 or 1") }
        return base[0] == 1
    }

    public func u64(_ name: String) throws(WireError) -> UInt64 {
        guard base.count == 8 else { throw .invalid(name, "a 64-bit integer is 8 bytes, not \(base.count)") }
        var v: UInt64 = 0
        for b in base { v = v << 8 | UInt64(b) }
        return v
    }
}

/// Why bytes could not be read as a message; each case names the part that was wrong.
public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(String)
    case unknownKind(UInt8)
    case missingField(kind: String, field: String)
    case invalid(String, String)
    case frameTooLarge(length: Int, limit: Int)
    case emptyFrame

    public var description: String {
        switch self {
        case .truncated(let what): return "message truncated: \(what)"
        case .unknownKind(let k): return "unknown message kind 0x\(String(k, radix: 16))"
        case .missingField(let kind, let field): return "\(kind) message lacks its required field '\(field)'"
        case .invalid(let field, let why): return "field '\(field)' is invalid: \(why)"
        case .frameTooLarge(let length, let limit): return "frame of \(length) bytes exceeds the limit of \(limit) bytes"
        case .emptyFrame: return "empty frame: a frame holds at least a kind byte and a request id"
        }
    }
}
