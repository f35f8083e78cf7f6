import LaunchServicesCore
import Testing

/// How GLib's `g_shell_parse_argv` splits an `Exec` line, which decides the program whose
/// presence on PATH makes an entry installed (and refuses an entry whose line does not split).
@Suite("ShellWords: an Exec line split as g_shell_parse_argv splits it")
struct ShellWordsTests {
    @Test("words and the program", arguments: [
        ("firefox %u", ["firefox", "%u"]),
        ("  spaced\tout  %U ", ["spaced", "out", "%U"]),
        ("'quoted program' --x", ["quoted program", "--x"]),
        ("\"double quoted\" %u", ["double quoted", "%u"]),
        ("a\"b c\"d", ["ab cd"]),
        ("back\\ slash", ["back slash"]),
        ("\"esc \\\" \\$ \\` \\\\ \\x\"", ["esc \" $ ` \\ \\x"]),
        ("'single \\ keeps'", ["single \\ keeps"]),
        ("one\ntwo", ["one", "two"]),
        ("join\\\nlines", ["joinlines"]),
        ("prog #comment", ["prog"]),
        ("prog a#b", ["prog", "a#b"]),
        ("prog\t#tab-is-no-comment-start", ["prog", "#tab-is-no-comment-start"]),
        ("prog #c\nnext", ["prog", "next"]),
        ("''", [""]),
        ("prog-a\\s%u", ["prog-as%u"]),
    ])
    func words(line: String, expected: [String]) {
        #expect(ShellWords.split(line) == .success(expected))
        #expect(ShellWords.program(of: line) == .success(expected[0]))
    }

    @Test("lines that do not split", arguments: [
        ("\"unclosed", ShellWords.Failure.unclosedQuote("\"")),
        ("'unclosed", .unclosedQuote("'")),
        ("prog \"a \\\" b", .unclosedQuote("\"")),
        ("trailing\\", .trailingBackslash),
        ("", .empty),
        ("   ", .empty),
        ("# all comment", .empty),
        ("prog #", .unclosedQuote("#")),
    ])
    func failures(line: String, failure: ShellWords.Failure) {
        #expect(ShellWords.split(line) == .failure(failure))
    }

    @Test("failure texts")
    func texts() {
        #expect(ShellWords.Failure.unclosedQuote("'").description == "the text ends before the matching '")
        #expect(ShellWords.Failure.trailingBackslash.description == "the text ends just after a backslash")
        #expect(ShellWords.Failure.empty.description == "the text is empty (or only blanks and comments)")
    }
}
