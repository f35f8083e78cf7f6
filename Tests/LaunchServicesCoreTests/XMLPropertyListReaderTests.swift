import LaunchServicesCore
import Testing

/// `lsopen --annotation-plist FILE`: an XML property list read exactly into a value, every
/// wire type included, bounded, and refused by name where the wire cannot carry it.
@Suite struct XMLPropertyListReaderTests {
    func read(_ body: String, prologue: Bool = true) throws(PropertyListReadError) -> PropertyListValue {
        let text = (prologue ? #"<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"# : "")
            + "<plist version=\"1.0\">" + body + "</plist>"
        return try XMLPropertyListReader.read(Array(text.utf8))
    }

    @Test("every type, exactly: a whole <real> stays a real, an <integer> an integer, <data> bytes; keys keep their order")
    func everyType() throws {
        let value = try read("""
            <dict>
              <key>s</key><string>a &lt;b&gt; &amp; &#233;&#x1F600; <![CDATA[<raw> & ]]></string>
              <key>i</key><integer> -42 </integer>
              <key>h</key><integer>0x10</integer>
              <key>r</key><real>2</real>
              <key>t</key><true/>
              <key>f</key><false></false>
              <key>d</key><data>AAEC
                /w==</data>
              <key>a</key><array><string/><array/><dict/></array>
            </dict>
            """)
        #expect(value == .dictionary([
            ("s", .string("a <b> & é😀 <raw> & ")), ("i", .integer(-42)), ("h", .integer(16)), ("r", .real(2)), ("t", .boolean(true)),
            ("f", .boolean(false)), ("d", .data([0, 1, 2, 255])), ("a", .array([.string(""), .array([]), .dictionary([])])),
        ]))
        #expect(try read("<string>plain</string>", prologue: false) == .string("plain"))
        #expect(try read("<integer>-9223372036854775808</integer>") == .integer(.min))
    }

    @Test("refused by name", arguments: [
        ("<date>2020-01-01T00:00:00Z</date>", "<date>"), ("<dict><key>a</key><true/><key>a</key><false/></dict>", "the key 'a' twice"),
        ("<integer>9223372036854775808</integer>", "does not fit in 64 bits"), ("<integer>1.5</integer>", "is not an integer"),
        ("<real>one</real>", "is not a number"), ("<data>AA!A</data>", "not base64"), ("<string>a &nbsp; b</string>", "unknown entity &nbsp;"),
        ("<string>unclosed", "the property list is not a valid property list"), ("<array><key>k</key></array>", "the property list is not a valid property list"),
    ])
    func refused(_ body: String, _ fragment: String) {
        #expect {
            try read(body)
        } throws: { error in
            "\(error)".contains(fragment)
        }
    }

    @Test("32 levels are read, 33 refused; a binary property list and an oversized file are refused before reading")
    func bounds() throws {
        let deepest = String(repeating: "<array>", count: 31) + "<true/>" + String(repeating: "</array>", count: 31)
        #expect(throws: Never.self) { try read(deepest) }
        let emptyInnermost = String(repeating: "<array>", count: 31) + "<array/>" + String(repeating: "</array>", count: 31)
        #expect(throws: Never.self) { try read(emptyInnermost) }
        let tooDeep = String(repeating: "<array>", count: 32) + "<true/>" + String(repeating: "</array>", count: 32)
        #expect(throws: PropertyListReadError.tooDeep(limit: 32)) { try read(tooDeep) }
        #expect(throws: PropertyListReadError.binary) { try XMLPropertyListReader.read(Array("bplist00\u{0}".utf8)) }
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: XMLPropertyListReader.maximumBytes + 1)
        #expect(throws: PropertyListReadError.tooLarge(size: huge.count, limit: XMLPropertyListReader.maximumBytes)) { try XMLPropertyListReader.read(huge) }
    }
}
