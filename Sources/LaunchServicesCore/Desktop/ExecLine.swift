/// A desktop entry's `Exec` value, read by the Desktop Entry Specification's quoting rules
/// (1.5, "The Exec key") and expanded into the argument vectors to start, never through a
/// shell: a URL is one argument, byte for byte, whatever it holds.
///
/// Two layers of escaping lie between the file and an argument, and each is undone once:
/// 1. **The key file's string escapes** (`\s`, `\n`, `\t`, `\r`, `\\`) are removed by the
///    desktop-entry reader before the value reaches this type. `Exec=a "b\\\\c"` in a file
///    is `a "b\\c"` here.
/// 2. **The Exec quoting** is undone here: an argument may be quoted in whole with `"…"`,
///    inside which `\"`, `` \` ``, `\$` and `\\` stand for the character; the result is
///    `a`, `b\c`. A literal backslash in a quoted argument therefore takes four in the file.
///
/// What is refused, with a named `ExecLineError`, rather than guessed:
/// - a reserved character (space and tab aside, `"`, `'`, `\`, `>`, `<`, `~`, `|`, `&`, `;`,
///   `$`, `*`, `?`, `#`, `(`, `)`, `` ` ``, newline) outside a quoted argument: the
///   specification says such an argument must be quoted, and the characters mean shell
///   syntax that is never run;
/// - a quote that does not enclose a whole argument, an unterminated quote, a backslash
///   inside quotes before any other character;
/// - a field code inside a quoted argument. The specification leaves the result undefined;
///   it is how `sh -c "… %u"` entries hand a caller's URL to a shell, so none is expanded
///   there (`%%` is still a percent sign). GLib instead shell-quotes the value into the
///   command line before splitting it, which keeps `sh -c` safe but leaves literal quotes
///   in every other program's argument;
/// - `%U`, `%F` and `%i`, which expand to several arguments, anywhere but alone in an
///   argument; any field code in the program's own name; a `%` not followed by a letter;
///   a field code the specification does not list. The deprecated codes (`%d %D %n %N %v
///   %m`) are dropped, as the specification asks.
///
/// Runs of spaces separate arguments (as GLib reads them); single quotes and backslashes
/// outside quotes, which GLib's shell-style reading also accepts, are refused here.
///
/// Expansion (`commands(for:values:)`) decides how many processes to start:
/// - `%U` or `%F` present: one process with every URL;
/// - else `%u` or `%f` present: one process per URL;
/// - no URL code at all: as if `%f` ended the line, one process per URL, as GLib and KDE do;
/// - no URLs: one process, the URL codes expanding to nothing.
///
/// `%f`/`%F` take local files: a `file:` URL becomes its path (`FileURLPath`). Any other
/// URL is refused (`urlIsNotALocalFile`). GLib drops such a URL silently (unless a GVfs FUSE
/// mount maps it to a path) and starts the app without it, which a caller would then hear
/// as opened; here the open fails and says why.
///
/// An argument that is not quoted and expands to the empty string (`%c` with no name, `%k`
/// with no location, `%u` with no URL) is left out, as a shell-style split of the expanded
/// line would; a quoted one (`""`) stays as an empty argument.
public struct ExecLine: Sendable, Equatable {
    /// The field codes that survive parsing (the deprecated ones are dropped, `%%` becomes text).
    public enum FieldCode: UInt8, Sendable, Equatable {
        case url = 0x75 // u
        case urls = 0x55 // U
        case file = 0x66 // f
        case files = 0x46 // F
        case icon = 0x69 // i
        case name = 0x63 // c
        case location = 0x6B // k

        /// `%u`, as written in the Exec line.
        public var written: String { "%" + String(UnicodeScalar(rawValue)) }

        /// Expands to any number of arguments, so must stand alone.
        var isMultiple: Bool { self == .urls || self == .files || self == .icon }
    }

    enum Piece: Sendable, Equatable {
        case text(String)
        case field(FieldCode)
    }

    struct Argument: Sendable, Equatable {
        var pieces: [Piece]
        var quoted: Bool
    }

    /// At most this many arguments in one Exec line (a line is bounded by the entry reader;
    /// this keeps a pathological one from becoming a huge vector).
    public static let maximumArguments = 4096

    let arguments: [Argument]

    /// The program as written (the first argument, quoting undone).
    public let program: String

    /// The Exec value, key-file escapes already removed (see the type's comment).
    public init(parsing exec: String) throws(ExecLineError) {
        var parser = ExecLineParser(Array(exec.utf8))
        let arguments = try parser.arguments()
        guard let first = arguments.first else { throw .empty }
        var program = ""
        for piece in first.pieces {
            switch piece {
            case .text(let text): program += text
            case .field(let code): throw .fieldCodeInProgram(code: code.written)
            }
        }
        guard !program.isEmpty else { throw .emptyProgram }
        self.arguments = arguments
        self.program = program
    }

    /// Whether the line names a URL or file code: `%u`, `%U`, `%f` or `%F`.
    public var takesURLs: Bool { codes.contains { $0 == .url || $0 == .urls } }
    public var takesFiles: Bool { codes.contains { $0 == .file || $0 == .files } }

    private var codes: [FieldCode] {
        arguments.flatMap { $0.pieces.compactMap { if case .field(let code) = $0 { return code } else { return nil } } }
    }

    /// The argument vectors to start, one per process, for `urls` (as the caller gave them;
    /// each must hold no NUL byte).
    public func commands(for urls: [String], values: ExecValues = ExecValues()) throws(ExecLineError) -> [[String]] {
        for url in urls where url.utf8.contains(0) {
            throw .nulInURL
        }
        let codes = self.codes
        let list = codes.contains(.urls) || codes.contains(.files)
        let single = codes.contains(.url) || codes.contains(.file)
        // Paths are needed only where a file code appears; each URL is checked once.
        let wantsPaths = codes.contains(.file) || codes.contains(.files) || (!list && !single)
        var paths: [String] = []
        if wantsPaths {
            for url in urls {
                do {
                    paths.append(try FileURLPath.path(of: url))
                } catch {
                    throw .urlIsNotALocalFile(url: url, reason: error.reason)
                }
            }
        }
        if urls.isEmpty {
            return [expand(urls: [], paths: [], values: values, appendFile: false)]
        }
        if list {
            return [expand(urls: urls, paths: paths, values: values, appendFile: false)]
        }
        return urls.indices.map { index in
            expand(urls: [urls[index]], paths: paths.isEmpty ? [] : [paths[index]], values: values, appendFile: !single)
        }
    }

    /// One process's vector: `urls` and `paths` are what its codes expand to (the same
    /// length, or `paths` empty when no file code needs them).
    private func expand(urls: [String], paths: [String], values: ExecValues, appendFile: Bool) -> [String] {
        var argv: [String] = []
        for argument in arguments {
            if argument.pieces.count == 1, case .field(let code) = argument.pieces[0], code.isMultiple {
                switch code {
                case .urls: argv += urls
                case .files: argv += paths
                case .icon:
                    if let icon = values.icon, !icon.isEmpty { argv += ["--icon", icon] }
                default: break
                }
                continue
            }
            var text = ""
            for piece in argument.pieces {
                switch piece {
                case .text(let literal): text += literal
                case .field(.url): text += urls.first ?? ""
                case .field(.file): text += paths.first ?? ""
                case .field(.name): text += values.name ?? ""
                case .field(.location): text += values.location ?? ""
                case .field: break // multiple codes stand alone (checked when parsed)
                }
            }
            if text.isEmpty && !argument.quoted { continue }
            argv.append(text)
        }
        if appendFile, let path = paths.first { argv.append(path) }
        return argv
    }
}

/// The entry's own values that `%i`, `%c` and `%k` expand to.
public struct ExecValues: Sendable, Equatable {
    /// `Icon` (`%i` expands to `--icon ICON`, or to nothing when this is missing or empty).
    public var icon: String?
    /// The entry's `Name`, localized by the caller (`%c`).
    public var name: String?
    /// Where the entry was read from, a path (`%k`).
    public var location: String?

    public init(icon: String? = nil, name: String? = nil, location: String? = nil) {
        self.icon = icon
        self.name = name
        self.location = location
    }
}

/// Why an Exec line was refused, or could not be expanded for the URLs given. Each says what
/// is wrong and where (a byte offset into the Exec value, counted from 0).
public enum ExecLineError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case emptyProgram
    case containsNUL
    case tooManyArguments(limit: Int)
    case unterminatedQuote(offset: Int)
    /// A quote that opens or closes inside an argument (`a"b"`, `"a"b`).
    case quoteInsideArgument(offset: Int)
    case reservedCharacter(character: String, offset: Int)
    /// A backslash inside quotes before something other than `"`, `` ` ``, `$` or `\`.
    case invalidEscape(character: String, offset: Int)
    /// A `%` at the end of the line or before something other than a letter or `%`.
    case loneFieldPercent(offset: Int)
    case unknownFieldCode(code: String, offset: Int)
    case fieldCodeInQuotes(code: String, offset: Int)
    /// `%U`, `%F` or `%i` with other text in the same argument.
    case fieldCodeNotAlone(code: String, offset: Int)
    case fieldCodeInProgram(code: String)
    /// A URL handed to `%f`/`%F` (or to a line without URL codes) that is not a local file.
    case urlIsNotALocalFile(url: String, reason: String)
    case nulInURL

    public var description: String {
        switch self {
        case .empty:
            return "the Exec line is empty: it must name the program to run"
        case .emptyProgram:
            return "the Exec line's program is an empty string: it must name the program to run"
        case .containsNUL:
            return "the Exec line contains a NUL byte, which no argument can hold"
        case .tooManyArguments(let limit):
            return "the Exec line has more than \(limit) arguments"
        case .unterminatedQuote(let offset):
            return "the Exec line's quote at byte \(offset) is never closed: end the argument with \""
        case .quoteInsideArgument(let offset):
            return "the Exec line has a quote at byte \(offset) inside an argument: a quote must enclose a whole argument (\"a b\", not a\"b\")"
        case .reservedCharacter(let character, let offset):
            return "the Exec line has \(TerminalText.quoted(character)) at byte \(offset) outside quotes: the Desktop Entry specification reserves it, so quote the argument (\"…\") that holds it"
        case .invalidEscape(let character, let offset):
            return "the Exec line escapes \(TerminalText.quoted(character)) at byte \(offset): inside quotes a backslash may only precede \", `, $ or \\ (a literal backslash is \\\\)"
        case .loneFieldPercent(let offset):
            return "the Exec line has a % at byte \(offset) that starts no field code: write a literal percent sign as %%"
        case .unknownFieldCode(let code, let offset):
            return "the Exec line uses \(TerminalText.quoted(code)) at byte \(offset), which is not a field code of the Desktop Entry specification (%u %U %f %F %i %c %k %%)"
        case .fieldCodeInQuotes(let code, let offset):
            return "the Exec line uses \(code) inside a quoted argument at byte \(offset): the specification leaves that undefined and it would hand the value to whatever reads the argument (a shell, for sh -c); write the field code as an argument of its own"
        case .fieldCodeNotAlone(let code, let offset):
            return "the Exec line's \(code) at byte \(offset) shares its argument with other text: \(code) expands to several arguments and must stand alone"
        case .fieldCodeInProgram(let code):
            return "the Exec line's program contains \(code): the program must be named literally"
        case .urlIsNotALocalFile(let url, let reason):
            return "the app takes local files only (%f/%F, or no URL field code), and \(TerminalText.quoted(url)) is not one: \(reason)"
        case .nulInURL:
            return "a URL contains a NUL byte, which no argument can hold"
        }
    }
}

/// The byte-level reader behind `ExecLine(parsing:)`. Every reserved character is ASCII, so
/// reading UTF-8 bytes never splits a character that matters; text is rebuilt from the bytes.
struct ExecLineParser {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    static func isReserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x0A, 0x22, 0x27, 0x5C, 0x3E, 0x3C, 0x7E, 0x7C, 0x26, 0x3B, 0x24, 0x2A, 0x3F, 0x23, 0x28, 0x29, 0x60:
            return true
        default:
            return false
        }
    }

    static func isLetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    mutating func arguments() throws(ExecLineError) -> [ExecLine.Argument] {
        if bytes.contains(0) { throw .containsNUL }
        var arguments: [ExecLine.Argument] = []
        while true {
            while index < bytes.count, bytes[index] == 0x20 { index += 1 }
            guard index < bytes.count else { break }
            let argument = bytes[index] == 0x22 ? try quoted() : try unquoted()
            if let argument { arguments.append(argument) }
            if arguments.count > ExecLine.maximumArguments { throw .tooManyArguments(limit: ExecLine.maximumArguments) }
        }
        return arguments
    }

    /// `"…"` as a whole argument. `%%` becomes `%`; any other field code is refused.
    private mutating func quoted() throws(ExecLineError) -> ExecLine.Argument {
        let start = index
        index += 1
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else { throw .unterminatedQuote(offset: start) }
            let byte = bytes[index]
            switch byte {
            case 0x5C: // backslash
                guard index + 1 < bytes.count else { throw .unterminatedQuote(offset: start) }
                let next = bytes[index + 1]
                guard next == 0x22 || next == 0x60 || next == 0x24 || next == 0x5C else {
                    throw .invalidEscape(character: Self.character(at: index + 1, in: bytes), offset: index)
                }
                text.append(next)
                index += 2
            case 0x22:
                index += 1
                guard index == bytes.count || bytes[index] == 0x20 else { throw .quoteInsideArgument(offset: index) }
                return ExecLine.Argument(pieces: [.text(String(decoding: text, as: UTF8.self))], quoted: true)
            case 0x25:
                guard index + 1 < bytes.count, bytes[index + 1] != 0x22 else { throw .loneFieldPercent(offset: index) }
                let code = bytes[index + 1]
                if code == 0x25 {
                    text.append(0x25)
                    index += 2
                } else if Self.isLetter(code) {
                    throw .fieldCodeInQuotes(code: "%" + String(UnicodeScalar(code)), offset: index)
                } else {
                    throw .loneFieldPercent(offset: index)
                }
            default:
                text.append(byte)
                index += 1
            }
        }
    }

    /// An argument up to the next space; `nil` when it held only deprecated field codes.
    private mutating func unquoted() throws(ExecLineError) -> ExecLine.Argument? {
        var pieces: [ExecLine.Piece] = []
        var text: [UInt8] = []
        var sawDeprecated = false
        var multiple: (code: ExecLine.FieldCode, offset: Int)?
        func flush() {
            if !text.isEmpty { pieces.append(.text(String(decoding: text, as: UTF8.self))) }
            text.removeAll()
        }
        while index < bytes.count, bytes[index] != 0x20 {
            let byte = bytes[index]
            if byte == 0x22 { throw .quoteInsideArgument(offset: index) }
            if Self.isReserved(byte) { throw .reservedCharacter(character: Self.character(at: index, in: bytes), offset: index) }
            guard byte == 0x25 else {
                text.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { throw .loneFieldPercent(offset: index) }
            let letter = bytes[index + 1]
            switch letter {
            case 0x25:
                text.append(0x25)
            case 0x64, 0x44, 0x6E, 0x4E, 0x76, 0x6D: // d D n N v m: deprecated, dropped
                sawDeprecated = true
            default:
                guard Self.isLetter(letter) else { throw .loneFieldPercent(offset: index) }
                guard let code = ExecLine.FieldCode(rawValue: letter) else {
                    throw .unknownFieldCode(code: "%" + String(UnicodeScalar(letter)), offset: index)
                }
                if code.isMultiple, multiple == nil { multiple = (code, index) }
                flush()
                pieces.append(.field(code))
            }
            index += 2
        }
        flush()
        if let multiple, pieces.count != 1 {
            throw .fieldCodeNotAlone(code: multiple.code.written, offset: multiple.offset)
        }
        if pieces.isEmpty && sawDeprecated { return nil }
        return ExecLine.Argument(pieces: pieces, quoted: false)
    }

    /// The character starting at `offset`, for a message (a lone byte of a broken sequence
    /// shows as U+FFFD).
    private static func character(at offset: Int, in bytes: [UInt8]) -> String {
        var end = offset + 1
        while end < bytes.count, end - offset < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }
}
