import ArgumentParser
import Foundation
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol

/// `lsctl pasteboard copy|paste|list|clear`: the daemon's pasteboards from a shell, reading
/// stdin and writing stdout so a pipe can feed an app and read its answer.
struct PasteboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pasteboard",
        abstract: "Copy to, paste from, list or clear the pasteboards.",
        discussion: "Without --name, the general pasteboard. Exit status as lsctl's: 1 when refused, when there is nothing to paste, or when stdin cannot be read.",
        subcommands: [Copy.self, Paste.self, List.self, Clear.self])

    struct Selection: ParsableArguments {
        @Option(help: "The pasteboard's name (default: the general pasteboard).")
        var name: String?

        @Option(help: "The pasteboard's password, when it has one (visible to other processes in ps; prefer --password-file or $LSCTL_PASTEBOARD_PASSWORD).")
        var password: String?

        @Option(help: "Read the password from the first line of this file.")
        var passwordFile: String?

        func validate() throws {
            guard password == nil || passwordFile == nil else { throw ValidationError("give --password or --password-file, not both") }
        }

        /// The password from the option, the file, or the environment, in that order.
        func resolvedPassword() throws -> String? {
            if let password { return password }
            if let passwordFile {
                guard let data = FileManager.default.contents(atPath: passwordFile), data.count <= 4096,
                      let text = String(data: data, encoding: .utf8) else {
                    throw ValidationError("--password-file \(passwordFile) cannot be read as a UTF-8 text file of at most 4096 bytes")
                }
                return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            }
            if let value = ProcessInfo.processInfo.environment["LSCTL_PASTEBOARD_PASSWORD"], !value.isEmpty { return value }
            return nil
        }
    }

    /// Sends one request; refusals exit 1 and an unreachable daemon 69, each with the daemon's words.
    static func send(_ request: PasteboardRequest, _ options: CommonOptions) throws -> PasteboardSnapshot {
        do {
            let client = try LaunchServicesClient(socketPath: options.socket, program: "lsctl")
            defer { client.close() }
            return try client.pasteboard(request)
        } catch {
            // The daemon refuses an oversized frame as soon as it reads the length, and
            // closes while we are still writing: say what was too big, not that it hung up.
            let bytes = request.items.reduce(0) { $0 + $1.data.count }
            if bytes >= Frame.defaultMaximumLength - 4096, !error.isRefusal || error.code == .protocolError {
                StandardStreams.error("lsctl: \(bytes) bytes are more than launchservicesd accepts in one message (maximumFrameLength, 1 MiB by default); a pasteboard holds at most pasteboard.maximumBytes (900 KiB by default)\n")
                throw ExitCode.failure
            }
            complain(error.description)
            if error.isRefusal { throw ExitCode.failure }
            throw ExitCode(ExitCodes.unavailable)
        }
    }

    static func summary(_ s: PasteboardSnapshot) -> String {
        var fields = ["\"name\":\(JSONText.quote(s.name))", "\"changeCount\":\(s.changeCount)", "\"persistent\":\(s.persistent)", "\"passwordProtected\":\(s.passwordProtected)"]
        if let seconds = s.expiresInSeconds { fields.append("\"expiresInSeconds\":\(seconds)") }
        return fields.joined(separator: ",")
    }

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put stdin (or --text) on a pasteboard, replacing what it held.")
        @OptionGroup var options: CommonOptions
        @OptionGroup var selection: Selection
        @Option(help: "The item's type identifier, e.g. public.utf8-plain-text, public.json, public.data.")
        var type: String = PasteboardType.plainText
        @Option(help: "Copy this text instead of reading stdin.")
        var text: String?
        @Option(help: "The items disappear after this many seconds.")
        var expire: UInt64?
        @Flag(help: "Keep the pasteboard across daemon restarts.")
        var persistent = false

        func run() throws {
            let data: [UInt8]
            if let text {
                data = Array(text.utf8)
            } else {
                let limit = 64 << 20
                guard let input = try readStdin(limit: limit) else {
                    StandardStreams.error("lsctl: stdin holds more than \(limit) bytes; a pasteboard holds far less (see pasteboard.maximumBytes)\n")
                    throw ExitCode.failure
                }
                data = input
            }
            let snapshot = try PasteboardCommand.send(PasteboardRequest(.copy, name: selection.name, items: [PasteboardItem(type: type, data: data)],
                                                                        password: try selection.resolvedPassword(), expireSeconds: expire, persistent: persistent), options)
            if options.json {
                printJSON("{" + PasteboardCommand.summary(snapshot) + ",\"bytes\":\(data.count)}")
            } else {
                StandardStreams.error(TerminalText.escapingControls("copied \(data.count) bytes of \(type) to pasteboard '\(snapshot.name)' (change \(snapshot.changeCount)\(snapshot.persistent ? ", persistent" : "")\(expire.map { ", expires in \($0) s" } ?? ""))") + "\n")
            }
        }

        func readStdin(limit: Int) throws -> [UInt8]? {
            do {
                return try StandardStreams.readInput(limit: limit)
            } catch {
                complain(error.description)
                throw ExitCode.failure
            }
        }
    }

    struct Paste: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a pasteboard's first item (of --type, when given) to stdout.")
        @OptionGroup var options: CommonOptions
        @OptionGroup var selection: Selection
        @Option(help: "Only an item conforming to this type (public.text matches plain text and JSON; public.data anything).")
        var type: String?

        func run() throws {
            let snapshot = try PasteboardCommand.send(PasteboardRequest(.paste, name: selection.name, type: type, password: try selection.resolvedPassword()), options)
            if options.json {
                let items = snapshot.items.map { item -> String in
                    var fields = ["\"type\":\(JSONText.quote(item.type))", "\"bytes\":\(item.data.count)"]
                    if let text = item.text, PasteboardType.conforms(item.type, to: PasteboardType.text) {
                        fields.append("\"text\":\(JSONText.quote(text))")
                    } else {
                        fields.append("\"base64\":\(JSONText.quote(Data(item.data).base64EncodedString()))")
                    }
                    return "{" + fields.joined(separator: ",") + "}"
                }
                printJSON("{" + PasteboardCommand.summary(snapshot) + ",\"items\":[" + items.joined(separator: ",") + "]}")
                return
            }
            guard let item = snapshot.items.first else {
                complain("pasteboard '\(snapshot.name)' is empty")
                throw ExitCode.failure
            }
            StandardStreams.output(bytes: item.data)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the pasteboards: items, sizes, change counts, expiry (never their data).")
        @OptionGroup var options: CommonOptions

        func run() throws {
            let boards = try options.query(.pasteboards, as: [PasteboardReport].self)
            if boards.isEmpty {
                printEscaped("no pasteboards")
                return
            }
            for board in boards {
                let items = board.items.map { "\($0.type) (\($0.bytes) bytes)" }
                var notes: [String] = ["change \(board.changeCount)"]
                if board.persistent { notes.append("persistent") }
                if board.passwordProtected { notes.append("password-protected") }
                if let seconds = board.expiresInSeconds { notes.append("expires in \(seconds) s") }
                let contents = board.passwordProtected ? "(protected)" : (items.isEmpty ? "empty" : items.joined(separator: ", "))
                printEscaped("\(board.name): \(contents); \(notes.joined(separator: ", "))")
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Empty a pasteboard.")
        @OptionGroup var options: CommonOptions
        @OptionGroup var selection: Selection

        func run() throws {
            let snapshot = try PasteboardCommand.send(PasteboardRequest(.clear, name: selection.name, password: try selection.resolvedPassword()), options)
            if options.json {
                printJSON("{" + PasteboardCommand.summary(snapshot) + "}")
            } else {
                printEscaped("cleared pasteboard '\(snapshot.name)' (change \(snapshot.changeCount))")
            }
        }
    }
}

extension ClientError {
    /// The daemon answered with a named refusal (as opposed to being unreachable).
    var isRefusal: Bool {
        if case .refused = self { return true }
        return false
    }
}
