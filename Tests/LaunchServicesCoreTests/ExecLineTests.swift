import LaunchServicesCore
import Testing

/// `ExecLine`: the Desktop Entry specification's quoting and field codes, every refusal by
/// name, and generated URLs and arguments that must arrive byte for byte. With it the small
/// pure pieces of a desktop launch: `FileURLPath`, `StderrTail`, `TerminalCommand` and the
/// outcome's kinds.
@Suite("ExecLine: quoting, field codes, processes and refusals")
struct ExecLineTests {
    func commands(_ exec: String, _ urls: [String] = [], _ values: ExecValues = ExecValues()) throws -> [[String]] {
        try ExecLine(parsing: exec).commands(for: urls, values: values)
    }

    func refusal(_ exec: String) -> ExecLineError? {
        do {
            _ = try ExecLine(parsing: exec)
            return nil
        } catch {
            return error
        }
    }

    func expansionRefusal(_ exec: String, _ urls: [String]) throws -> ExecLineError? {
        let line = try ExecLine(parsing: exec)
        do {
            _ = try line.commands(for: urls)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Splitting and quoting

    @Test("arguments are separated by spaces; runs of spaces and spaces at the ends separate nothing")
    func splitting() throws {
        #expect(try commands("mail") == [["mail"]])
        #expect(try commands("  /usr/bin/mail   --compose  now ") == [["/usr/bin/mail", "--compose", "now"]])
        #expect(try ExecLine(parsing: "/usr/bin/mail -x").program == "/usr/bin/mail")
    }

    @Test("a quoted argument keeps spaces and reserved characters, and its escapes are undone once")
    func quoting() throws {
        #expect(try commands(#"app "a b" "x;y|z&<>~*?#()'""#) == [["app", "a b", "x;y|z&<>~*?#()'"]])
        #expect(try commands(#"app "say \"hi\"" "\`cmd\`" "\$HOME" "back\\slash""#) == [["app", "say \"hi\"", "`cmd`", "$HOME", "back\\slash"]])
        #expect(try commands(#"app "" x"#) == [["app", "", "x"]])
        #expect(try commands(#""/opt/My App/run" --x"#) == [["/opt/My App/run", "--x"]])
        #expect(try ExecLine(parsing: #""/opt/My App/run""#).program == "/opt/My App/run")
        #expect(try commands("app \"tab\there\nnewline\"") == [["app", "tab\there\nnewline"]])
        #expect(try commands(#"app "100%%" 50%%"#) == [["app", "100%", "50%"]])
        // A file's `Exec=app "a\\\\b"` is `app "a\\b"` once the key-file escapes are gone.
        #expect(try commands(#"app "a\\b""#) == [["app", #"a\b"#]])
        // Non-ASCII text passes through untouched, quoted or not.
        #expect(try commands(#"écrire "café ☕" naïve"#) == [["écrire", "café ☕", "naïve"]])
    }

    @Test("every reserved character outside quotes is refused by name, with its offset")
    func reservedCharacters() {
        for character in ["\t", "\n", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`"] {
            #expect(refusal("app a\(character)b") == .reservedCharacter(character: character, offset: 5), "\(character)")
        }
        #expect(refusal("app a\"b\"") == .quoteInsideArgument(offset: 5))
        #expect(refusal("app \"a\"b") == .quoteInsideArgument(offset: 7))
        #expect(refusal("app \"a b") == .unterminatedQuote(offset: 4))
        #expect(refusal("app \"a\\") == .unterminatedQuote(offset: 4))
        #expect(refusal(#"app "a\nb""#) == .invalidEscape(character: "n", offset: 6))
        #expect(refusal(#"app "\é""#) == .invalidEscape(character: "é", offset: 5))
        #expect(refusal("") == .empty)
        #expect(refusal("    ") == .empty)
        #expect(refusal(#""" --x"#) == .emptyProgram)
        #expect(refusal("app\0x") == .containsNUL)
    }

    @Test("each refusal says what is wrong and what to write instead")
    func refusalText() {
        #expect(ExecLineError.reservedCharacter(character: ";", offset: 5).description.contains("quote the argument"))
        #expect(ExecLineError.loneFieldPercent(offset: 3).description.contains("%%"))
        #expect(ExecLineError.unknownFieldCode(code: "%z", offset: 3).description.contains("'%z'"))
        #expect(ExecLineError.fieldCodeInQuotes(code: "%u", offset: 3).description.contains("argument of its own"))
        #expect(ExecLineError.invalidEscape(character: "n", offset: 2).description.contains("\\\\"))
        // URLs in messages are quoted with control characters escaped.
        let text = ExecLineError.urlIsNotALocalFile(url: "mailto:a\nb", reason: "it is not a file: URL").description
        #expect(text.contains("'mailto:a\\nb'") && !text.contains("\n"))
    }

    @Test("too many arguments are refused")
    func argumentLimit() {
        let line = "app" + String(repeating: " x", count: ExecLine.maximumArguments)
        #expect(refusal(line) == .tooManyArguments(limit: ExecLine.maximumArguments))
        #expect(refusal("app" + String(repeating: " x", count: ExecLine.maximumArguments - 1)) == nil)
    }

    // MARK: Field codes

    @Test("%u starts one process per URL; %U passes them all to one")
    func urlCodes() throws {
        #expect(try commands("mail %u", ["mailto:a@x", "mailto:b@x"]) == [["mail", "mailto:a@x"], ["mail", "mailto:b@x"]])
        #expect(try commands("mail --new %U --end", ["mailto:a@x", "mailto:b@x"]) == [["mail", "--new", "mailto:a@x", "mailto:b@x", "--end"]])
        #expect(try commands("mail --to=%u", ["mailto:a@x"]) == [["mail", "--to=mailto:a@x"]])
        #expect(try ExecLine(parsing: "mail %U").takesURLs)
        #expect(try !ExecLine(parsing: "mail %F").takesURLs)
        #expect(try ExecLine(parsing: "mail %F").takesFiles)
    }

    @Test("with no URLs a URL code expands to nothing: alone it leaves no argument, inside one it leaves the rest")
    func noURLs() throws {
        #expect(try commands("mail %u") == [["mail"]])
        #expect(try commands("mail %U --x") == [["mail", "--x"]])
        #expect(try commands("mail --to=%u") == [["mail", "--to="]])
        #expect(try commands("mail %f %F") == [["mail"]])
    }

    @Test("%f and %F pass the local paths of file: URLs")
    func fileCodes() throws {
        #expect(try commands("view %f", ["file:///tmp/a%20b.txt", "file://localhost/etc/x"]) == [["view", "/tmp/a b.txt"], ["view", "/etc/x"]])
        #expect(try commands("view %F", ["file:///tmp/a", "FILE:/tmp/b"]) == [["view", "/tmp/a", "/tmp/b"]])
        #expect(try commands("view --file=%f", ["file:///tmp/%3B;x"]) == [["view", "--file=/tmp/;;x"]])
    }

    @Test("a non-file URL for %f or %F is refused by name (GLib would drop it and start the app anyway)")
    func nonFileForFileCode() throws {
        let refused = try expansionRefusal("view %f", ["https://example.com/a"])
        #expect(refused == .urlIsNotALocalFile(url: "https://example.com/a", reason: "it is not a file: URL"))
        #expect(try expansionRefusal("view %F", ["file:///ok", "mailto:x"]) == .urlIsNotALocalFile(url: "mailto:x", reason: "it is not a file: URL"))
        #expect(try expansionRefusal("view %f", ["file://elsewhere/x"]) == .urlIsNotALocalFile(url: "file://elsewhere/x", reason: "it names the host 'elsewhere', not this machine"))
    }

    @Test("a line without URL codes takes each URL as %f would at its end, one process per URL, as GLib and KDE do")
    func noURLCode() throws {
        #expect(try commands("view --fullscreen", ["file:///a", "file:///b"]) == [["view", "--fullscreen", "/a"], ["view", "--fullscreen", "/b"]])
        #expect(try commands("view %c", ["file:///a"], ExecValues(name: "Viewer")) == [["view", "Viewer", "/a"]])
        #expect(try expansionRefusal("mail", ["mailto:x"]) == .urlIsNotALocalFile(url: "mailto:x", reason: "it is not a file: URL"))
        #expect(try commands("mail") == [["mail"]])
    }

    @Test("%i is --icon ICON or nothing; %c the name; %k the entry's location; %% a percent sign")
    func entryCodes() throws {
        let values = ExecValues(icon: "mail-client", name: "Mail & More", location: "/usr/share/applications/mail.desktop")
        #expect(try commands("mail %i %c %k 100%%", [], values) == [["mail", "--icon", "mail-client", "Mail & More", "/usr/share/applications/mail.desktop", "100%"]])
        #expect(try commands("mail %i --title=%c --from=%k", [], ExecValues(icon: "")) == [["mail", "--title=", "--from="]])
        #expect(try commands("mail %i %c %k x") == [["mail", "x"]])
        #expect(try commands("mail %%u") == [["mail", "%u"]])
    }

    @Test("the deprecated codes are dropped, alone or inside an argument")
    func deprecatedCodes() throws {
        #expect(try commands("app %d %D %n %N %v %m -x%dy %u", ["a:b"]) == [["app", "-xy", "a:b"]])
        #expect(try commands("app %d%m") == [["app"]])
    }

    @Test("field codes are refused by name where they cannot be expanded safely")
    func fieldCodeRefusals() {
        #expect(refusal("app %z") == .unknownFieldCode(code: "%z", offset: 4))
        #expect(refusal("app %X") == .unknownFieldCode(code: "%X", offset: 4))
        #expect(refusal("app 50%") == .loneFieldPercent(offset: 6))
        #expect(refusal("app %1") == .loneFieldPercent(offset: 4))
        #expect(refusal("app \"%u\"") == .fieldCodeInQuotes(code: "%u", offset: 5))
        #expect(refusal("sh -c \"open %u\"") == .fieldCodeInQuotes(code: "%u", offset: 12))
        #expect(refusal("app \"%c\"") == .fieldCodeInQuotes(code: "%c", offset: 5))
        #expect(refusal("app \"50%\"") == .loneFieldPercent(offset: 7))
        #expect(refusal("app --files=%F") == .fieldCodeNotAlone(code: "%F", offset: 12))
        #expect(refusal("app %U%U") == .fieldCodeNotAlone(code: "%U", offset: 4))
        #expect(refusal("app x%i") == .fieldCodeNotAlone(code: "%i", offset: 5))
        #expect(refusal("%u") == .fieldCodeInProgram(code: "%u"))
        #expect(refusal("run%k") == .fieldCodeInProgram(code: "%k"))
        #expect(refusal("%d") == .empty)
    }

    @Test("a URL with a NUL byte cannot be an argument")
    func nulInURL() throws {
        #expect(try expansionRefusal("app %u", ["a:\0"]) == .nulInURL)
    }

    @Test("a URL full of shell syntax is one argument, byte for byte")
    func hostileURL() throws {
        let url = "x-test://a b/\"q\" 'r';$(touch /tmp/x)`id`#frag|&<>*?~\\\t\n%20%u%%"
        #expect(try commands("app %u", [url]) == [["app", url]])
        #expect(try commands("app %U", [url, url]) == [["app", url, url]])
        #expect(try commands("app --url=%u", [url]) == [["app", "--url=" + url]])
        // Field codes inside a URL are not expanded again.
        #expect(try commands("app %u %c", ["a:%c"], ExecValues(name: "N")) == [["app", "a:%c", "N"]])
    }

    // MARK: Generated

    /// Every byte a URL can carry (all but NUL), the shell's specials over-represented.
    static let specials: [UInt8] = Array(" \"'`$();|&<>#*?~\\\t\n%!{}[]=,".utf8)

    @Test("generated URLs with every special byte arrive unchanged, each as one argument")
    func generatedURLs() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("ExecLineTests.generatedURLs seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        let lines = try ["app %u", "app --url=%u", "app -- %U", "\"/opt/a b/app\" %i %U --end"].map { try ExecLine(parsing: $0) }
        for _ in 0..<2000 {
            var bytes: [UInt8] = Array("x-test:".utf8)
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                if Bool.random(using: &random) {
                    bytes.append(Self.specials.randomElement(using: &random)!)
                } else {
                    bytes.append(UInt8.random(in: 1...0x7F, using: &random))
                }
            }
            if Int.random(in: 0..<4, using: &random) == 0 { bytes += Array("é☕".utf8) }
            let url = String(decoding: bytes, as: UTF8.self)
            let other = url + "/2"
            #expect(try lines[0].commands(for: [url, other]) == [["app", url], ["app", other]], "seed \(seed)")
            #expect(try lines[1].commands(for: [url]) == [["app", "--url=" + url]], "seed \(seed)")
            #expect(try lines[2].commands(for: [url, other]) == [["app", "--", url, other]], "seed \(seed)")
            #expect(try lines[3].commands(for: [url], values: ExecValues(icon: url)) == [["/opt/a b/app", "--icon", url, url, "--end"]], "seed \(seed)")
        }
    }

    /// The specification's quoting, written the way an entry's author (or a generator) would.
    /// By scalar, not by Character: `%` and a combining mark after it are one Character.
    static func quote(_ argument: String) -> String {
        var out = "\""
        for scalar in argument.unicodeScalars {
            if "\"`$\\".unicodeScalars.contains(scalar) { out += "\\" }
            out.unicodeScalars.append(scalar)
            if scalar == "%" { out += "%" }
        }
        return out + "\""
    }

    @Test("generated arguments, quoted by the specification's rules, read back unchanged")
    func generatedQuoting() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("ExecLineTests.generatedQuoting seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<2000 {
            let arguments = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                String(decoding: (0..<Int.random(in: 0...12, using: &random)).map { _ in
                    Bool.random(using: &random) ? Self.specials.randomElement(using: &random)! : UInt8.random(in: 1...0x7F, using: &random)
                }, as: UTF8.self)
            }
            // A combining mark after `%` makes one Character of the two; quoting is by scalar.
            let marked = arguments.map { Int.random(in: 0..<8, using: &random) == 0 ? $0 + "%\u{05A5}" : $0 }
            let exec = "prog " + marked.map(Self.quote).joined(separator: " ")
            #expect(try commands(exec) == [["prog"] + marked], "seed \(seed): \(exec)")
        }
    }

    // MARK: The small pieces

    func localPath(_ url: String) -> Result<String, FileURLPath.NotLocal> {
        Result { () throws(FileURLPath.NotLocal) in try FileURLPath.path(of: url) }
    }

    @Test("FileURLPath: the forms GLib accepts, and each refusal")
    func fileURLPath() {
        #expect(localPath("file:///tmp/x") == .success("/tmp/x"))
        #expect(localPath("file://LocalHost/tmp/x") == .success("/tmp/x"))
        #expect(localPath("file:/tmp/x?y") == .success("/tmp/x?y"))
        #expect(localPath("File:///caf%C3%A9") == .success("/café"))
        #expect(localPath("http://x/y") == .failure(FileURLPath.NotLocal(reason: "it is not a file: URL")))
        #expect(localPath("file") == .failure(FileURLPath.NotLocal(reason: "it is not a file: URL")))
        #expect(localPath("file\u{1A}///x") == .failure(FileURLPath.NotLocal(reason: "it is not a file: URL")))
        #expect(localPath("file:relative") == .failure(FileURLPath.NotLocal(reason: "it has no absolute path")))
        #expect(localPath("file://localhost") == .failure(FileURLPath.NotLocal(reason: "it has no absolute path")))
        #expect(localPath("file:///a#b") == .failure(FileURLPath.NotLocal(reason: "a local file URL may not carry a fragment (#)")))
        #expect(localPath("file:///a%2") == .failure(FileURLPath.NotLocal(reason: "it has a malformed %-escape")))
        #expect(localPath("file:///a%zz") == .failure(FileURLPath.NotLocal(reason: "it has a malformed %-escape")))
        #expect(localPath("file:///a%00") == .failure(FileURLPath.NotLocal(reason: "it encodes a NUL byte (%00)")))
        #expect(localPath("file:///a%2Fb") == .failure(FileURLPath.NotLocal(reason: "it encodes a slash (%2F) inside a path segment")))
        #expect(localPath("file:///a%FF") == .failure(FileURLPath.NotLocal(reason: "its decoded path is not UTF-8")))
    }

    @Test("StderrTail keeps whole last lines within its bounds")
    func stderrTail() {
        var tail = StderrTail(maximumBytes: 32, maximumLines: 2, maximumLineBytes: 8)
        tail.append(Array("one\ntwo\r\n\nthree".utf8))
        #expect(tail.lines == ["two", "three"])
        // Past the byte bound the oldest bytes go, and the line they cut goes with them.
        var cut = StderrTail(maximumBytes: 14, maximumLines: 5)
        cut.append(Array("0123456789\nabcdefghij\nxyz\n".utf8))
        #expect(cut.lines == ["xyz"])
        var growing = StderrTail(maximumBytes: 8)
        growing.append(Array("abc\n".utf8))
        growing.append(Array("defgh\n".utf8))
        #expect(growing.lines == ["defgh"])
        var long = StderrTail(maximumLineBytes: 4)
        long.append(Array("abcdefgh\n".utf8))
        #expect(long.lines == ["abcd"])
        var small = StderrTail(maximumBytes: 4)
        small.append(Array("abcdefgh".utf8))
        #expect(small.lines == [])
        var broken = StderrTail()
        broken.append([0x61, 0xFF, 0x0A])
        #expect(broken.lines == ["a\u{FFFD}"])
    }

    @Test("TerminalCommand: $TERMINAL when set, else x-terminal-emulator, wrapped with -e")
    func terminalCommand() {
        #expect(TerminalCommand.program(terminalVariable: "foot") == "foot")
        #expect(TerminalCommand.program(terminalVariable: "") == "x-terminal-emulator")
        #expect(TerminalCommand.program(terminalVariable: nil) == "x-terminal-emulator")
        #expect(TerminalCommand.wrap(["mutt", "mailto:x"], in: "/usr/bin/xterm") == ["/usr/bin/xterm", "-e", "mutt", "mailto:x"])
        #expect("\(TerminalCommand.notFound(terminalVariable: nil))".contains("x-terminal-emulator is not on PATH"))
        #expect("\(TerminalCommand.notFound(terminalVariable: "kitt"))".contains("TERMINAL='kitt' is not found"))
    }

    @Test("DesktopLaunchOutcome: status 0 within the grace is forwarded, anything else exited; only delivered, running and forwarded succeed")
    func outcomeKinds() {
        #expect(DesktopLaunchOutcome.ended(pid: 7, status: .exited(0), stderrTail: ["noise"]) == DesktopLaunchOutcome(kind: .forwarded, pid: 7, exitStatus: .exited(0)))
        #expect(DesktopLaunchOutcome.ended(pid: 7, status: .exited(3), stderrTail: ["x"]) == DesktopLaunchOutcome(kind: .exited, pid: 7, exitStatus: .exited(3), stderrTail: ["x"]))
        #expect(DesktopLaunchOutcome.ended(pid: 7, status: .signaled(9), stderrTail: []).kind == .exited)
        #expect(DesktopLaunchOutcome.ended(pid: 7, status: nil, stderrTail: []).description == "exited: status unknown (pid 7)")
        #expect(DesktopLaunchOutcome.Kind.allCases.filter(\.isSuccess) == [.delivered, .running, .forwarded])
        let failed = DesktopLaunchOutcome.failed(.system(stage: "exec", path: "/bin/nope", errno: 2, reason: "No such file or directory"))
        #expect(failed.description == "failed to start: exec '/bin/nope' failed: No such file or directory (errno 2)")
    }
}
