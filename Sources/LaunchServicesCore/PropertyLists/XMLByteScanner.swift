/// A cursor over an XML property list's bytes for `XMLPropertyListBounds`: tags, text and
/// the parts Foundation's scanner skips, each read the way that scanner reads it.
struct XMLByteScanner {
    let b: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    func at(_ literal: StaticString) -> Bool { at(literal, offset: i) }

    func at(_ literal: StaticString, offset: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard offset >= 0, offset + count <= b.count else { return false }
        let start = literal.utf8Start
        for k in 0 ..< count where b[offset + k] != start[k] { return false }
        return true
    }

    /// The index just past the first `terminator` found at or after `from`.
    func end(of terminator: StaticString, from: Int, what: String) throws(PropertyListBoundsError) -> Int {
        var k = from
        let first = terminator.utf8Start[0]
        while k + terminator.utf8CodeUnitCount <= b.count {
            if b[k] == first, at(terminator, offset: k) { return k + terminator.utf8CodeUnitCount }
            k += 1
        }
        throw .malformedXML("a \(what) is never closed with '\(terminator)'")
    }

    mutating func skipSpace() {
        while i < b.count, Self.isSpace(b[i]) { i += 1 }
    }

    mutating func skipByteOrderMarkAndSpace() {
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        skipSpace()
    }

    /// Refuses byte-order marks of encodings other than UTF-8 and input that does not start
    /// with `<`, then skips what Foundation skips before the top element: white space,
    /// processing instructions, comments and a DOCTYPE without an internal subset.
    mutating func skipPrologue() throws(PropertyListBoundsError) {
        if b.starts(with: [0xFE, 0xFF]) || b.starts(with: [0xFF, 0xFE]) || b.starts(with: [0x00, 0x00, 0xFE, 0xFF]) {
            throw .unsupportedEncoding("UTF-16 or UTF-32 (it starts with a byte-order mark)")
        }
        skipByteOrderMarkAndSpace()
        guard at("<") else { throw .unrecognizedFormat }
        while true {
            skipSpace()
            guard i < b.count else { throw .malformedXML("it holds no element") }
            guard at("<") else { throw .malformedXML("unexpected text at byte \(i), before the top element") }
            if at("<?") {
                i = try end(of: "?>", from: i + 2, what: "processing instruction")
            } else if at("<!--") {
                i = try end(of: "-->", from: i + 4, what: "comment")
            } else if at("<!DOCTYPE") {
                let close = try end(of: ">", from: i + 9, what: "DOCTYPE")
                guard !b[i ..< close].contains(UInt8(ascii: "[")) else { throw .malformedXML("a DOCTYPE with an internal subset ('[') is not read") }
                i = close
            } else if at("<!") {
                throw .malformedXML("unexpected '<!' at byte \(i)")
            } else {
                return
            }
        }
    }

    /// Skips white space, comments and processing instructions between two values, as
    /// Foundation does inside `<plist>`, `<array>` and `<dict>`.
    mutating func skipBetweenValues() throws(PropertyListBoundsError) {
        while true {
            skipSpace()
            guard i < b.count else { throw .malformedXML("it ends before its top element is closed") }
            if at("<!--") {
                i = try end(of: "-->", from: i + 4, what: "comment")
            } else if at("<?") {
                // Foundation searches for "?>" from the '?' itself here, so "<?>" is complete.
                i = try end(of: "?>", from: i + 1, what: "processing instruction")
            } else {
                return
            }
        }
    }

    /// Reads `<name …>` or `<name …/>` at `i`; the tag ends at the first `>`, as in Foundation.
    mutating func openTag() throws(PropertyListBoundsError) -> (XMLPropertyListBounds.Tag, isEmpty: Bool) {
        let tag = try name(at: i + 1)
        let after = i + 1 + tag.name.utf8CodeUnitCount
        guard after < b.count, b[after] == UInt8(ascii: ">") || b[after] == UInt8(ascii: "/") || Self.isSpace(b[after]) else {
            throw .malformedXML("unknown tag at byte \(i)")
        }
        let next = try end(of: ">", from: after, what: "<\(tag.name)> tag")
        i = next
        return (tag, b[next - 2] == UInt8(ascii: "/"))
    }

    /// Reads `</name>` (white space allowed before `>`) at `i`.
    mutating func closeTag() throws(PropertyListBoundsError) -> XMLPropertyListBounds.Tag {
        guard at("</") else { throw .malformedXML("expected a closing tag at byte \(i)") }
        let tag = try name(at: i + 2)
        i += 2 + tag.name.utf8CodeUnitCount
        skipSpace()
        guard at(">") else { throw .malformedXML("</\(tag.name) is not closed with '>' at byte \(i)") }
        i += 1
        return tag
    }

    /// Skips an element's text up to the next `<`; in strings and keys, CDATA sections (whose
    /// content may hold `<`) are skipped whole.
    mutating func skipText(allowingCDATA: Bool) throws(PropertyListBoundsError) {
        while true {
            while i < b.count, b[i] != UInt8(ascii: "<") { i += 1 }
            guard i < b.count else { throw .malformedXML("it ends inside an element's text") }
            guard allowingCDATA, at("<![CDATA[") else { return }
            i = try end(of: "]]>", from: i + 9, what: "CDATA section")
        }
    }

    /// The tag whose name is exactly the letters at `offset`.
    func name(at offset: Int) throws(PropertyListBoundsError) -> XMLPropertyListBounds.Tag {
        var end = offset
        while end < b.count, Self.isLetter(b[end]) { end += 1 }
        for tag in XMLPropertyListBounds.Tag.allCases where end - offset == tag.name.utf8CodeUnitCount && at(tag.name, offset: offset) {
            return tag
        }
        throw .malformedXML("unknown tag '\(String(decoding: b[offset ..< min(end, offset + 40)], as: UTF8.self))' at byte \(offset - 1)")
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
    static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    static func lowercased(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
}
