import LaunchServicesCore
import Testing

/// The key-file syntax as GLib 2.74's GKeyFile reads it: what is a group, a key, a comment,
/// and every line GLib refuses (and so ignores the whole file over), with its line number.
@Suite("KeyFile: GLib's key-file syntax")
struct KeyFileTests {
    func refusal(_ text: String, maxLineBytes: Int = 65_536) -> KeyFileError? {
        do {
            _ = try KeyFile(parsing: text, maxLineBytes: maxLineBytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("groups, keys and the line of each; comments, blank lines and blanks around = are skipped")
    func groupsAndKeys() throws {
        let file = try KeyFile(parsing: """
            # a comment before the first group
               
            [Desktop Entry]
            Type=Application
              Name = Mail  
            \t# an indented comment
            Exec=mail %u

            [Desktop Action new]  
            Exec=mail --new
            """)
        #expect(file.startGroup == "Desktop Entry")
        #expect(file.groupNames == ["Desktop Entry", "Desktop Action new"])
        #expect(file.value("Type", in: "Desktop Entry") == KeyFile.Value("Application", line: 4))
        #expect(file.value("Name", in: "Desktop Entry") == KeyFile.Value("Mail  ", line: 5), "blanks before the value go, trailing ones stay")
        #expect(file.value("Exec", in: "Desktop Entry")?.line == 7)
        #expect(file.value("Exec", in: "Desktop Action new") == KeyFile.Value("mail --new", line: 10))
        #expect(file.groups["Desktop Entry"]?.line == 3)
    }

    @Test("localized keys are keys of their own; a locale may hold letters, digits, - _ . @")
    func localizedKeys() throws {
        let file = try KeyFile(parsing: "[G]\nName=Mail\nName[de]=Post\nName[sr@latin]=Pošta\nName[zh_CN.UTF-8]=邮件\nName[日本]=x\n")
        #expect(file.value("Name", in: "G")?.string == "Mail")
        #expect(file.value("Name[de]", in: "G")?.string == "Post")
        #expect(file.value("Name[sr@latin]", in: "G")?.string == "Pošta")
        #expect(file.value("Name[zh_CN.UTF-8]", in: "G")?.string == "邮件")
        #expect(file.value("Name[日本]", in: "G")?.string == "x")
    }

    @Test("a group met again continues the first; a key met again replaces the value and its line")
    func repeats() throws {
        let file = try KeyFile(parsing: "[A]\nk=1\n[B]\nk=2\n[A]\nk=3\nother=4\n")
        #expect(file.groupNames == ["A", "B"])
        #expect(file.value("k", in: "A") == KeyFile.Value("3", line: 6))
        #expect(file.value("other", in: "A")?.line == 7)
        #expect(file.value("k", in: "B")?.string == "2")
    }

    @Test("CRLF line ends: the \\r before \\n is dropped, one ending the last line without \\n is kept (as GLib does)")
    func carriageReturns() throws {
        let file = try KeyFile(parsing: "[G]\r\na=1\r\nb=2\r")
        #expect(file.value("a", in: "G")?.string == "1")
        #expect(file.value("b", in: "G")?.string == "2\r")
    }

    @Test("a selection keeps only the named groups and keys, but the whole file is still checked")
    func selection() throws {
        let text = "[Desktop Entry]\nType=Application\nName=x\nName[de]=y\n[Other]\nType=z\n"
        let file = try KeyFile(parsing: text, keeping: .groups(["Desktop Entry": .named(["Type"])]))
        #expect(file.groups.keys.sorted() == ["Desktop Entry"])
        #expect(file.groups["Desktop Entry"]?.values.keys.sorted() == ["Type"])
        #expect(file.hasGroup("Other"))
        let prefixed = try KeyFile(parsing: "[D]\nx-scheme-handler/a=1\ntext/plain=2\n", keeping: .groups(["D": .prefix("x-scheme-handler/")]))
        #expect(prefixed.groups["D"]?.values.keys.sorted() == ["x-scheme-handler/a"])
        #expect(refusal(text + "oops\n") != nil)
        #expect(throws: KeyFileError.self) {
            try KeyFile(parsing: text + "oops\n", keeping: .groups(["Desktop Entry": .named(["Type"])]))
        }
    }

    @Test("each line GLib refuses, named with its line", arguments: [
        ("[G]\nnot a pair\n", KeyFileError(line: 2, kind: .notKeyGroupOrComment("not a pair"))),
        ("[G]\n=value\n", KeyFileError(line: 2, kind: .notKeyGroupOrComment("=value"))),
        ("[G]\n[unclosed\n", KeyFileError(line: 2, kind: .notKeyGroupOrComment("[unclosed"))),
        ("[G] trailing\n", KeyFileError(line: 1, kind: .notKeyGroupOrComment("[G] trailing"))),
        ("[]\n", KeyFileError(line: 1, kind: .invalidGroupName(""))),
        ("[a[b]\n", KeyFileError(line: 1, kind: .invalidGroupName("a[b"))),
        ("[a\u{1}b]\n", KeyFileError(line: 1, kind: .invalidGroupName("a\u{1}b"))),
        ("key=value\n[G]\n", KeyFileError(line: 1, kind: .keyBeforeFirstGroup)),
        ("# comment\nkey=value\n", KeyFileError(line: 2, kind: .keyBeforeFirstGroup)),
        ("[G]\nName [de]=x\n", KeyFileError(line: 2, kind: .invalidKeyName("Name [de]"))),
        ("[G]\nName[de]x=y\n", KeyFileError(line: 2, kind: .invalidKeyName("Name[de]x"))),
        ("[G]\nName[d e]=y\n", KeyFileError(line: 2, kind: .invalidKeyName("Name[d e]"))),
        ("[G]\nName[de=y\n", KeyFileError(line: 2, kind: .invalidKeyName("Name[de"))),
        ("[G]\na]b=y\n", KeyFileError(line: 2, kind: .invalidKeyName("a]b"))),
        ("[G]\n[x]y=1\n", KeyFileError(line: 2, kind: .invalidKeyName("[x]y"))),
        ("[G]\nEncoding=Latin-1\n", KeyFileError(line: 2, kind: .unsupportedEncoding("Latin-1"))),
        ("[G]\nok=1\nbad\u{0}=2\n", KeyFileError(line: 3, kind: .nulByte)),
    ])
    func refusals(text: String, error: KeyFileError) {
        #expect(refusal(text) == error)
    }

    @Test("Encoding=UTF-8 (any case) is accepted in the first group; other values only outside it")
    func encoding() {
        #expect(refusal("[G]\nEncoding=utf-8\n") == nil)
        #expect(refusal("[G]\nEncoding=UTF-8\n") == nil)
        #expect(refusal("[G]\n[H]\nEncoding=Latin-1\n") == nil)
        #expect(refusal("[G]\n[H]\n[G]\nEncoding=Latin-1\n") == KeyFileError(line: 4, kind: .unsupportedEncoding("Latin-1")))
    }

    @Test("spaces inside a key are accepted, blanks after [group] too")
    func glibLeniency() throws {
        let file = try KeyFile(parsing: "[G] \t\nmy key=1\n")
        #expect(file.value("my key", in: "G")?.string == "1")
    }

    @Test("a line longer than the bound is refused by its number")
    func lineBound() {
        let long = String(repeating: "x", count: 40)
        #expect(refusal("[G]\nk=\(long)\n", maxLineBytes: 30) == KeyFileError(line: 2, kind: .lineTooLong(limit: 30)))
        #expect(refusal("[G]\nk=\(long)\n", maxLineBytes: 42) == nil)
    }

    @Test("an empty file, or comments only, has no group and is no error")
    func empty() throws {
        #expect(try KeyFile(parsing: "").startGroup == nil)
        #expect(try KeyFile(parsing: "# only\n\n").groupNames.isEmpty)
    }

    @Test("error texts name the line and quote what was found")
    func errorTexts() {
        #expect(refusal("[G]\nnot a pair\n")?.description == "line 2: 'not a pair' is not a key=value pair, a [group] or a # comment")
        #expect(refusal("[]\n")?.description == "line 1: '' is not a valid group name (empty, or with [, ] or a control character)")
        #expect(refusal("k=v\n")?.description == "line 1: a key before the first [group]")
        #expect(refusal("[G]\nEncoding=Latin-1\n")?.description == "line 2: Encoding='Latin-1' is not UTF-8")
        #expect(refusal("[G]\na\u{1B}]=1\n")?.description == "line 2: 'a\\x1B]' is not a valid key name")
    }
}
