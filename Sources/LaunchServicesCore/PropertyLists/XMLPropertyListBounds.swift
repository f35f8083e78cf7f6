/// The XML half of `PropertyListBounds`: a strict, iterative reading of the plist grammar
/// that counts how deep `<array>` and `<dict>` nest, and builds nothing.
///
/// A loose tag counter is not enough: wherever it and Foundation's scanner read a comment,
/// a processing instruction or text differently, a hidden `</array>` can make it count less
/// than Foundation recurses. So this accepts only a plist whose structure leaves no room for
/// two readings: exact tag names, text without `<` (CDATA aside, in strings and keys),
/// comments and processing instructions only where Foundation skips them, and each skipped
/// part ending where Foundation ends it (comments at the first `-->` after `<!--`,
/// processing instructions at the first `?>`, CDATA at the first `]]>`). Anything else is
/// refused, even where Foundation might accept it. Foundation stops at the end of the top
/// element, so this does too.
enum XMLPropertyListBounds {
    enum Tag: CaseIterable {
        case plist, array, dict, key, string, data, date, real, integer, `true`, `false`

        var name: StaticString {
            switch self {
            case .plist: "plist"
            case .array: "array"
            case .dict: "dict"
            case .key: "key"
            case .string: "string"
            case .data: "data"
            case .date: "date"
            case .real: "real"
            case .integer: "integer"
            case .true: "true"
            case .false: "false"
            }
        }
    }

    /// An element whose content is being read: a dictionary notes whether a key's value is
    /// due, a `<plist>` whether it holds its one value.
    struct Open {
        var tag: Tag
        var flag = false
    }

    static func check(_ b: UnsafeBufferPointer<UInt8>, limits: PropertyListLimits) throws(PropertyListBoundsError) {
        var scanner = XMLByteScanner(b)
        try scanner.skipPrologue()
        try checkDeclaredEncoding(b)
        var stack: [Open] = []
        var depth = 0
        var elements = 0
        repeat {
            if !stack.isEmpty { try scanner.skipBetweenValues() }
            guard scanner.at("<") else { throw .malformedXML("expected a tag at byte \(scanner.i)") }
            if scanner.at("</") {
                let tag = try scanner.closeTag()
                guard let open = stack.popLast(), open.tag == tag else { throw .malformedXML("</\(tag.name)> at byte \(scanner.i) closes nothing open") }
                if tag == .dict, open.flag { throw .malformedXML("a <key> in a <dict> has no value") }
                if tag == .plist, !open.flag { throw .malformedXML("<plist> holds no value") }
                if tag == .array || tag == .dict { depth -= 1 }
                completed(tag, in: &stack)
                continue
            }
            let (tag, isEmpty) = try scanner.openTag()
            elements += 1
            guard elements <= limits.maximumObjects else { throw .tooManyValues(limit: limits.maximumObjects) }
            if let parent = stack.last {
                let keyDue = parent.tag == .dict && !parent.flag
                guard (tag == .key) == keyDue, tag != .plist else { throw .malformedXML("<\(tag.name)> is not allowed at byte \(scanner.i) (\(keyDue ? "a <key> is due" : "a value is due"))") }
                if parent.tag == .plist, parent.flag { throw .malformedXML("<plist> holds more than one value") }
            } else if tag == .key {
                throw .malformedXML("the top element is a <key>")
            }
            switch tag {
            case .plist, .array, .dict:
                if isEmpty {
                    guard tag != .plist else { throw .malformedXML("<plist/> holds no value") }
                    completed(tag, in: &stack)
                } else {
                    if tag != .plist {
                        depth += 1
                        guard depth <= limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
                    }
                    stack.append(Open(tag: tag))
                }
            case .key, .string, .data, .date, .real, .integer:
                if isEmpty {
                    guard tag == .string else { throw .malformedXML("<\(tag.name)/> must have content") }
                } else {
                    try scanner.skipText(allowingCDATA: tag == .key || tag == .string)
                    guard try scanner.closeTag() == tag else { throw .malformedXML("<\(tag.name)> is not closed by </\(tag.name)>") }
                }
                completed(tag, in: &stack)
            case .true, .false:
                if !isEmpty {
                    guard try scanner.closeTag() == tag else { throw .malformedXML("<\(tag.name)> is not closed by </\(tag.name)>") }
                }
                completed(tag, in: &stack)
            }
        } while !stack.isEmpty
    }

    /// Notes in the parent that one of its parts (a key, a value) was read.
    static func completed(_ tag: Tag, in stack: inout [Open]) {
        guard let last = stack.indices.last else { return }
        switch stack[last].tag {
        case .dict: stack[last].flag = tag == .key
        case .plist: stack[last].flag = true
        default: break
        }
    }

    /// `<?xml … encoding="X" ?>` at the start: Foundation converts from X before scanning, so
    /// only UTF-8 (whose tags are the bytes read here) is let through.
    static func checkDeclaredEncoding(_ b: UnsafeBufferPointer<UInt8>) throws(PropertyListBoundsError) {
        var scanner = XMLByteScanner(b)
        scanner.skipByteOrderMarkAndSpace()
        guard scanner.at("<?xml") else { return }
        let start = scanner.i + 5
        let close = try scanner.end(of: "?>", from: start, what: "XML declaration") - 2
        let keyword = Array("encoding".utf8)
        var i = start
        while i + keyword.count <= close {
            guard zip(keyword, b[i ..< i + keyword.count]).allSatisfy({ $0 == XMLByteScanner.lowercased($1) }) else {
                i += 1
                continue
            }
            i += keyword.count
            while i < close, XMLByteScanner.isSpace(b[i]) || b[i] == UInt8(ascii: "=") { i += 1 }
            guard i < close, b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'") else { return }
            let quote = b[i]
            var valueEnd = i + 1
            while valueEnd < close, b[valueEnd] != quote { valueEnd += 1 }
            let value = b[(i + 1) ..< valueEnd]
            guard value.map(XMLByteScanner.lowercased).elementsEqual("utf-8".utf8) else {
                throw .unsupportedEncoding("'" + String(decoding: value, as: UTF8.self) + "'")
            }
            return
        }
    }
}
