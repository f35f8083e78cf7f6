/// One representation on a pasteboard: a type identifier and its bytes (iOS's
/// `UIPasteboard` items keyed by UTI).
public struct PasteboardItem: Sendable, Equatable {
    public var type: String
    public var data: [UInt8]

    public init(type: String, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    public init(text: String) {
        self.init(type: PasteboardType.plainText, data: Array(text.utf8))
    }

    /// The bytes as text, when they are valid UTF-8.
    public var text: String? { String(validating: data, as: UTF8.self) }
}

/// Type identifiers, after Apple's uniform type identifiers: reverse-DNS names, and a small
/// conformance tree so that asking for `public.text` finds plain text and JSON, and
/// `public.data` finds anything.
public enum PasteboardType {
    public static let plainText = "public.utf8-plain-text"
    public static let json = "public.json"
    public static let data = "public.data"
    public static let text = "public.text"

    public static let maximumLength = 128

    /// The parent of each well-known type; unknown types conform only to themselves and
    /// `public.data`.
    static let parents: [String: String] = [
        "public.utf8-plain-text": "public.plain-text",
        "public.plain-text": "public.text",
        "public.json": "public.text",
        "public.url": "public.text",
        "public.text": "public.data",
    ]

    /// Why `type` is not a usable identifier, or `nil` when it is.
    public static func problem(with type: String) -> String? {
        if type.isEmpty { return "the type identifier is empty; use e.g. \(plainText), \(json) or \(data)" }
        if type.utf8.count > maximumLength { return "the type identifier '\(type.prefix(40))…' is longer than \(maximumLength) bytes" }
        let allowed = type.utf8.allSatisfy { URLScheme.isAlpha($0) || URLScheme.isDigit($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F || $0 == 0x2B }
        if !allowed || type.hasPrefix(".") || type.hasSuffix(".") || !type.contains(".") {
            return "'\(type)' is not a type identifier: use a reverse-DNS name of letters, digits, '.', '-', '_' and '+', such as \(plainText), \(json) or \(data)"
        }
        return nil
    }

    /// Whether an item of type `type` satisfies a request for `wanted`.
    public static func conforms(_ type: String, to wanted: String) -> Bool {
        if type == wanted || wanted == data { return true }
        var current = type
        var steps = 0
        while let parent = parents[current], steps < 8 {
            if parent == wanted { return true }
            current = parent
            steps += 1
        }
        return false
    }
}
