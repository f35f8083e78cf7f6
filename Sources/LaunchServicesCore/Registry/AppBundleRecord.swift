/// An app's fields other than its identifier, packed into one byte array.
///
/// The registry holds every app for the daemon's whole life. Kept as separate strings and
/// arrays (name, path, executable, schemes, URL types, each its own allocation, and a
/// 104-byte value in every dictionary bucket), 10,000 apps cost about a third of the daemon's
/// memory. Packed, an app is its identifier and one allocation; a field is decoded when read,
/// which only the cold path (the executable to spawn) and administration do.
///
/// The encoding is canonical — one byte sequence for one set of fields — so comparing and
/// hashing the bytes compares and hashes the fields. It lives only in memory (the store keeps
/// its own columns), so it may change freely.
///
/// Layout, every number an unsigned LEB128 varint, every text its UTF-8 byte count then its
/// bytes:
///
///     name  path  executable
///     schemes:  count, then each scheme's text, in declaration order
///     queries:  count, then each scheme's text, sorted
///     types:    count, then each type:
///                 0 (no CFBundleURLName) or 1 and the name's text;
///                 0 when its schemes are the app's schemes exactly, else count + 1 and
///                 each scheme as its place in the app's schemes + 1, or 0 and its text
struct AppBundleRecord: Hashable, Sendable {
    private(set) var bytes: [UInt8]

    init(name: String, path: String, executable: String, schemes: [URLScheme], queriesSchemes: Set<URLScheme>,
         urlTypes: [AppBundle.URLType]) {
        var writer = Writer()
        writer.text(name)
        writer.text(path)
        writer.text(executable)
        writer.number(schemes.count)
        for scheme in schemes { writer.text(scheme.normalized) }
        writer.number(queriesSchemes.count)
        for scheme in queriesSchemes.sorted() { writer.text(scheme.normalized) }
        writer.number(urlTypes.count)
        // A bundle may declare tens of thousands of schemes: their places by lookup, not search.
        var places: [URLScheme: Int] = [:]
        if urlTypes.contains(where: { $0.schemes != schemes }) {
            places.reserveCapacity(schemes.count)
            for (place, scheme) in schemes.enumerated() where places[scheme] == nil { places[scheme] = place }
        }
        for type in urlTypes {
            if let name = type.name {
                writer.number(1)
                writer.text(name)
            } else {
                writer.number(0)
            }
            if type.schemes == schemes {
                writer.number(0)
                continue
            }
            writer.number(type.schemes.count + 1)
            for scheme in type.schemes {
                if let place = places[scheme] {
                    writer.number(place + 1)
                } else {
                    writer.number(0)
                    writer.text(scheme.normalized)
                }
            }
        }
        // Exactly as long as the fields: an array grown by appends keeps up to twice that.
        let scratch = writer.bytes
        bytes = [UInt8](unsafeUninitializedCapacity: scratch.count) { buffer, count in
            _ = buffer.initialize(from: scratch)
            count = scratch.count
        }
    }

    var name: String { read { $0.text() } }
    var path: String { read { $0.skipTexts(1); return $0.text() } }
    var executable: String { read { $0.skipTexts(2); return $0.text() } }

    var schemes: [URLScheme] {
        read { reader in
            reader.skipTexts(3)
            return reader.schemes()
        }
    }

    var queriesSchemes: Set<URLScheme> {
        read { reader in
            reader.skipTexts(3)
            reader.skipTexts(reader.number())
            return Set(reader.schemes())
        }
    }

    /// Whether `scheme` is among the queries schemes, without building the set.
    func mayQuery(_ scheme: URLScheme) -> Bool {
        read { reader in
            reader.skipTexts(3)
            reader.skipTexts(reader.number())
            for _ in 0..<reader.number() where reader.isText(scheme.normalized) { return true }
            return false
        }
    }

    var urlTypes: [AppBundle.URLType] {
        read { reader in
            reader.skipTexts(3)
            let schemes = reader.schemes()
            reader.skipTexts(reader.number())
            let count = reader.number()
            var types: [AppBundle.URLType] = []
            types.reserveCapacity(count)
            for _ in 0..<count {
                let name: String? = reader.number() == 0 ? nil : reader.text()
                let header = reader.number()
                guard header > 0 else {
                    types.append(AppBundle.URLType(name: name, schemes: schemes))
                    continue
                }
                var typeSchemes: [URLScheme] = []
                typeSchemes.reserveCapacity(header - 1)
                for _ in 1..<header {
                    let place = reader.number()
                    typeSchemes.append(place > 0 ? schemes[place - 1] : URLScheme(normalized: reader.text()))
                }
                types.append(AppBundle.URLType(name: name, schemes: typeSchemes))
            }
            return types
        }
    }

    private func read<T>(_ body: (inout Reader) -> T) -> T {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(buffer: buffer)
            return body(&reader)
        }
    }

    /// Appends the encoding's numbers and texts.
    private struct Writer {
        var bytes: [UInt8] = []

        mutating func number(_ value: Int) {
            var rest = UInt(value)
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func text(_ value: String) {
            number(value.utf8.count)
            bytes.append(contentsOf: value.utf8)
        }
    }

    /// Reads the encoding front to back. The bytes are only ever this type's own writing, so a
    /// read past the end is a bug, and traps as an array access would.
    private struct Reader {
        let buffer: UnsafeBufferPointer<UInt8>
        var offset = 0

        mutating func number() -> Int {
            var value: UInt = 0
            var shift: UInt = 0
            while true {
                let byte = buffer[offset]
                offset += 1
                value |= UInt(byte & 0x7F) << shift
                if byte < 0x80 { return Int(value) }
                shift += 7
            }
        }

        mutating func text() -> String {
            let count = number()
            defer { offset += count }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[offset..<offset + count]), as: UTF8.self)
        }

        mutating func skipTexts(_ count: Int) {
            for _ in 0..<count { offset += number() }
        }

        /// Whether the next text is `value`, read past it either way.
        mutating func isText(_ value: String) -> Bool {
            let count = number()
            defer { offset += count }
            var value = value
            return value.withUTF8 { $0.count == count && $0.elementsEqual(buffer[offset..<offset + count]) }
        }

        mutating func schemes() -> [URLScheme] {
            let count = number()
            var schemes: [URLScheme] = []
            schemes.reserveCapacity(count)
            for _ in 0..<count { schemes.append(URLScheme(normalized: text())) }
            return schemes
        }
    }
}

extension URLScheme {
    /// A scheme validated and normalized before: one read back from `AppBundleRecord`.
    init(normalized: String) {
        self.normalized = normalized
    }
}
