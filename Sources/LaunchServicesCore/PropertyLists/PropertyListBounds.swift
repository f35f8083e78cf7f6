/// Checks a property list's raw bytes against size, nesting and object limits *before*
/// Foundation parses them.
///
/// Foundation's XML scanner recurses once per `<array>`/`<dict>` level (10,000 levels, about
/// 150 KB, overflow the stack), and a binary plist's shared references can make its decoder
/// visit the same objects millions of times. Info.plists come from anyone who can write into
/// an apps folder or run `lsctl register`, so the daemon refuses such input with a named
/// error instead. The walk is iterative: nothing here recurses on the input.
///
/// The checker does not fully validate (Foundation does that); it guarantees that whatever
/// reaches Foundation is bounded. Where it cannot tell what Foundation would make of the
/// input, it refuses.
public enum PropertyListBounds {
    /// `bplist00`: binary property lists start with this; anything else must be XML.
    static let binaryMagic: [UInt8] = Array("bplist00".utf8)

    /// Refuses `bytes` unless they are a UTF-8 XML or a `bplist00` binary property list within
    /// `limits`.
    public static func check(_ bytes: [UInt8], limits: PropertyListLimits = .infoPlist) throws(PropertyListBoundsError) {
        guard bytes.count <= limits.maximumSize else {
            throw .tooLarge(size: bytes.count, limit: limits.maximumSize)
        }
        try bytes.withUnsafeBufferPointer { (buffer) throws(PropertyListBoundsError) in
            if buffer.starts(with: binaryMagic.prefix(6)) {
                try BinaryPropertyListBounds.check(buffer, limits: limits)
            } else {
                try XMLPropertyListBounds.check(buffer, limits: limits)
            }
        }
    }
}

/// How big a property list may be. The defaults are for Info.plists, which are a few KB and
/// nest four or five levels deep (a URL type's schemes: dict, array, dict, array).
public struct PropertyListLimits: Sendable, Equatable {
    /// Bytes of the whole file.
    public var maximumSize: Int
    /// Levels of arrays and dictionaries, the outermost container counting as one.
    public var maximumDepth: Int
    /// Objects in a binary plist's offset table, and values the document stands for once
    /// shared references are counted at every use (for XML: elements).
    public var maximumObjects: Int

    public init(maximumSize: Int, maximumDepth: Int, maximumObjects: Int) {
        self.maximumSize = maximumSize
        self.maximumDepth = maximumDepth
        self.maximumObjects = maximumObjects
    }

    /// 1 MiB, 32 levels, 100,000 objects. Each is far above any real Info.plist; 32 levels
    /// is also what an annotation may nest on the wire, and keeps Foundation's recursive
    /// parsers a few KB deep into the stack.
    public static let infoPlist = PropertyListLimits(maximumSize: 1 << 20, maximumDepth: 32, maximumObjects: 100_000)
}

/// Why a property list was refused before parsing. The text completes "Info.plist …".
public enum PropertyListBoundsError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    case tooDeep(limit: Int)
    /// A binary plist's offset table declares more objects than allowed.
    case tooManyObjects(count: Int, limit: Int)
    /// More values than allowed: XML elements, or binary values counting shared ones per use.
    case tooManyValues(limit: Int)
    case unsupportedEncoding(String)
    case unrecognizedFormat
    case malformedXML(String)
    case malformedBinary(String)
    case referenceOutOfRange(object: Int, reference: UInt64, objectCount: Int)
    case referenceCycle(object: Int)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit):
            return "is \(size) bytes, more than the limit of \(limit) bytes; keep only the keys Launch Services reads (real Info.plists are a few KB)"
        case .tooDeep(let limit):
            return "nests arrays and dictionaries deeper than the limit of \(limit) levels (nesting depth > \(limit)); real Info.plists nest a few levels"
        case .tooManyObjects(let count, let limit):
            return "declares \(count) objects, more than the limit of \(limit)"
        case .tooManyValues(let limit):
            return "holds more than \(limit) values (shared values counted at every use), the limit"
        case .unsupportedEncoding(let name):
            return "is encoded as \(name); save it as UTF-8 XML or as a binary property list"
        case .unrecognizedFormat:
            return "is neither an XML property list (starting with '<') nor a binary one (bplist00)"
        case .malformedXML(let problem):
            return "is not a valid property list: \(problem)"
        case .malformedBinary(let problem):
            return "is not a valid property list (binary): \(problem)"
        case .referenceOutOfRange(let object, let reference, let count):
            return "is not a valid property list (binary): object \(object) refers to object \(reference), but there are only \(count)"
        case .referenceCycle(let object):
            return "is not a valid property list (binary): object \(object) contains itself (a reference cycle)"
        }
    }
}
