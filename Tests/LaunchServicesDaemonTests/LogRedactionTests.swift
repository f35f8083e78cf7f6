@testable import LaunchServicesDaemon
import LaunchServicesCore
import Testing

/// URLs stay out of the log however a message quotes them, and nothing in a log line is a
/// raw control character.
@Suite struct LogRedactionTests {
    @Test("a URL is replaced by its scheme, quoted, escaped or raw")
    func redacted() {
        let url = "x-sadun-services:paste?password=hunter2&data=\u{1B}[2J\nforged"
        let message = "refused to open \(TerminalText.quoted(url)): the callback \(TerminalText.quoted(url)) opens in no app; raw: \(url)"
        let logged = LogRedaction.redact(message, urls: [url])
        #expect(!logged.contains("hunter2"), "\(logged)")
        #expect(logged == "refused to open 'x-sadun-services:…': the callback 'x-sadun-services:…' opens in no app; raw: x-sadun-services:…")
    }

    @Test("what is left has its control characters escaped")
    func controlsEscaped() {
        let logged = LogRedaction.redact("bundle /apps/a\u{1B}]0;t\u{7}\nforged line", urls: [])
        #expect(logged == #"bundle /apps/a\x1B]0;t\x07\nforged line"#)
    }
}
