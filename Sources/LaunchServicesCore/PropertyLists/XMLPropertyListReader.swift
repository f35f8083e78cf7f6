/// An XML property list read into a `PropertyListValue`, for `lsopen --annotation-plist FILE`:
/// every type the wire carries (PROTOCOL.md §7), `<data>` included, each read exactly (an
/// `<integer>` stays an integer, a `<real>` a real, whatever its value).
///
/// The bytes are bounded and checked first by `PropertyListBounds` (size, elements, and a
/// strict reading of the grammar, all iterative), so this walk meets only well-formed input
/// and is iterative too. Nesting is checked as the wire counts it (`maximumDepth` levels of
/// values, the outermost counting as one). What the wire cannot carry is refused by name:
/// a `<date>`, a key given twice in one dictionary, a binary property list (its bytes are
/// not read here: convert it to XML).
public enum XMLPropertyListReader {
    /// The largest file read: far more than an annotation needs, well inside one frame.
    public static let maximumBytes = 256 * 1024
    /// Levels of values, as on the wire (`PropertyListCoding.maximumDepth`).
    public static let maximumDepth = 32

    public static func read(_ bytes: [UInt8]) throws(PropertyListReadError) -> PropertyListValue {
        guard bytes.count <= maximumBytes else { throw .tooLarge(size: bytes.count, limit: maximumBytes) }
        guard !bytes.starts(with: PropertyListBounds.binaryMagic.prefix(6)) else { throw .binary }
        // Containers nest at most as deep as values; the exact count (values) is kept below.
        let limits = PropertyListLimits(maximumSize: maximumBytes, maximumDepth: maximumDepth, maximumObjects: 100_000)
        do {
            try PropertyListBounds.check(bytes, limits: limits)
        } catch {
            throw .refused(error)
        }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(PropertyListReadError) in try build(buffer) }
    }

    /// A container being read.
    private enum Open {
        case plist(PropertyListValue?)
        case array([PropertyListValue])
        case dictionary([(String, PropertyListValue)], keys: Set<String>, pendingKey: String?)
    }

    private static func build(_ b: UnsafeBufferPointer<UInt8>) throws(PropertyListReadError) -> PropertyListValue {
        var scanner = XMLByteScanner(b)
        var stack: [Open] = []
        var result: PropertyListValue?
        /// Levels of values open around the next one (`<plist>` is not a value).
        var depth = 0

        func deliver(_ value: PropertyListValue) throws(PropertyListReadError) {
            guard depth < maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            guard let last = stack.indices.last else {
                result = value
                return
            }
            switch stack[last] {
            case .plist: stack[last] = .plist(value)
            case .array(var items):
                items.append(value)
                stack[last] = .array(items)
            case .dictionary(var entries, let keys, let key):
                entries.append((key ?? "", value))
                stack[last] = .dictionary(entries, keys: keys, pendingKey: nil)
            }
        }

        do {
            try scanner.skipPrologue()
            repeat {
                if !stack.isEmpty { try scanner.skipBetweenValues() }
                if scanner.at("</") {
                    _ = try scanner.closeTag()
                    guard let open = stack.popLast() else { throw PropertyListReadError.malformed("a closing tag closes nothing") }
                    switch open {
                    case .plist(let value):
                        guard let value else { throw PropertyListReadError.malformed("<plist> holds no value") }
                        try deliver(value)
                    case .array(let items):
                        depth -= 1
                        try deliver(.array(items))
                    case .dictionary(let entries, _, _):
                        depth -= 1
                        try deliver(.dictionary(entries))
                    }
                    continue
                }
                let (tag, isEmpty) = try scanner.openTag()
                switch tag {
                case .plist:
                    stack.append(.plist(nil))
                case .array, .dict:
                    if isEmpty {
                        try deliver(tag == .array ? .array([]) : .dictionary([]))
                    } else {
                        // The container is a value at this depth: checked now, delivered when closed.
                        guard depth < maximumDepth else { throw PropertyListReadError.tooDeep(limit: maximumDepth) }
                        depth += 1
                        stack.append(tag == .array ? .array([]) : .dictionary([], keys: [], pendingKey: nil))
                    }
                case .true, .false:
                    if !isEmpty { _ = try scanner.closeTag() }
                    try deliver(.boolean(tag == .true))
                case .key, .string, .data, .date, .real, .integer:
                    let text = isEmpty ? "" : try content(&scanner, tag: tag)
                    switch tag {
                    case .key:
                        guard let last = stack.indices.last, case .dictionary(let entries, var keys, _) = stack[last] else {
                            throw PropertyListReadError.malformed("a <key> outside a <dict>")
                        }
                        guard keys.insert(text).inserted else { throw PropertyListReadError.duplicateKey(text) }
                        stack[last] = .dictionary(entries, keys: keys, pendingKey: text)
                    case .string: try deliver(.string(text))
                    case .integer: try deliver(.integer(try integer(text)))
                    case .real: try deliver(.real(try real(text)))
                    case .data: try deliver(.data(try base64(text)))
                    default: throw PropertyListReadError.date
                    }
                }
            } while !stack.isEmpty
        } catch let error as PropertyListReadError {
            throw error
        } catch let error as PropertyListBoundsError {
            throw .refused(error)
        } catch {
            throw .malformed("\(error)")
        }
        guard let result else { throw .malformed("it holds no value") }
        return result
    }

    /// An element's text up to its closing tag: entities and character references decoded,
    /// CDATA sections (in keys and strings) taken as they are.
    private static func content(_ scanner: inout XMLByteScanner, tag: XMLPropertyListBounds.Tag) throws(PropertyListReadError) -> String {
        let start = scanner.i
        let end: Int
        do {
            try scanner.skipText(allowingCDATA: tag == .key || tag == .string)
            end = scanner.i
            _ = try scanner.closeTag()
        } catch {
            throw .refused(error)
        }
        var bytes: [UInt8] = []
        var i = start
        let b = scanner.b
        while i < end {
            if b[i] == UInt8(ascii: "<") {
                // A CDATA section, as the bounds check let through: `<![CDATA[ … ]]>`.
                let from = i + 9
                var to = from
                while to + 3 <= end, !(b[to] == UInt8(ascii: "]") && b[to + 1] == UInt8(ascii: "]") && b[to + 2] == UInt8(ascii: ">")) { to += 1 }
                bytes += b[from ..< to]
                i = to + 3
            } else if b[i] == UInt8(ascii: "&") {
                var semicolon = i + 1
                while semicolon < end, semicolon - i <= 10, b[semicolon] != UInt8(ascii: ";") { semicolon += 1 }
                guard semicolon < end, b[semicolon] == UInt8(ascii: ";") else { throw .malformed("an '&' in <\(tag.name)> is not an entity such as &amp;") }
                let name = String(decoding: b[(i + 1) ..< semicolon], as: UTF8.self)
                guard let scalar = entity(name) else { throw .malformed("unknown entity &\(name); in <\(tag.name)>") }
                bytes += Array(String(Character(scalar)).utf8)
                i = semicolon + 1
            } else {
                bytes.append(b[i])
                i += 1
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformed("<\(tag.name)> is not UTF-8") }
        return text
    }

    static func entity(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            return value.flatMap(Unicode.Scalar.init)
        }
    }

    static func trimmed(_ text: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let end = text.lastIndex { !isSpace($0) }.map { text.index(after: $0) } ?? start
        return text[start ..< end]
    }

    /// Decimal, or hexadecimal after `0x`, with an optional sign; it must fit in 64 bits.
    static func integer(_ text: String) throws(PropertyListReadError) -> Int64 {
        var digits = trimmed(text)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        let hex = digits.hasPrefix("0x") || digits.hasPrefix("0X")
        guard let magnitude = hex ? UInt64(digits.dropFirst(2), radix: 16) : UInt64(digits, radix: 10) else {
            throw .badValue("<integer>\(text)</integer> is not an integer, or does not fit in 64 bits")
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw .badValue("<integer>\(text)</integer> does not fit in 64 bits") }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw .badValue("<integer>\(text)</integer> does not fit in 64 bits") }
        return Int64(magnitude)
    }

    static func real(_ text: String) throws(PropertyListReadError) -> Double {
        guard let value = Double(trimmed(text)) else { throw .badValue("<real>\(text)</real> is not a number") }
        return value
    }

    /// Base64, white space ignored, padding optional.
    static func base64(_ text: String) throws(PropertyListReadError) -> [UInt8] {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        var padding = false
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a") ... UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding = true
                continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: throw .badValue("<data> holds '\(TerminalText.escapingControls(String(Character(Unicode.Scalar(byte)))))', which is not base64")
            }
            guard !padding else { throw .badValue("<data> has base64 after its '=' padding") }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }
}

/// Why a property-list file is not an annotation.
public enum PropertyListReadError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    case tooDeep(limit: Int)
    case binary
    case date
    case duplicateKey(String)
    case badValue(String)
    case malformed(String)
    /// The bounds check refused it (malformed XML, an encoding other than UTF-8, …).
    case refused(PropertyListBoundsError)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): "the property list is \(size) bytes; at most \(limit) are read"
        case .tooDeep(let limit): "the property list nests deeper than \(limit) levels, the most an annotation may"
        case .binary: "it is a binary property list; only XML ones are read (convert it: python3 -c 'import plistlib,sys; sys.stdout.buffer.write(plistlib.dumps(plistlib.load(open(sys.argv[1],\"rb\"))))' FILE)"
        case .date: "it holds a <date>, which an annotation cannot carry (the wire has no date type); write it as a <string>"
        case .duplicateKey(let key): "a <dict> holds the key \(TerminalText.quoted(key)) twice"
        case .badValue(let problem): TerminalText.escapingControls(problem)
        case .malformed(let problem): "it is not a valid property list: \(problem)"
        case .refused(let error): "the property list \(error)"
        }
    }
}
