import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesProtocol
import Testing

/// The daemon's side of the typed admin plane: what it sends decodes as the shared report
/// types, in the documented format (PROTOCOL.md §9).
@Suite("Admin report encoding")
struct AdminReportEncodingTests {
    @Test("JSONDocument: sorted keys, two-space indent, slashes unescaped, absent optionals left out")
    func format() throws {
        let text = JSONDocument.encode(UnregisterReport(unregistered: "a/b"))
        #expect(text == "{\n  \"unregistered\" : \"a/b\"\n}")
        let noted = JSONDocument.encode(UnregisterReport(unregistered: "a", note: "n"))
        #expect(noted == "{\n  \"note\" : \"n\",\n  \"unregistered\" : \"a\"\n}")
        // The same text as the dictionary the daemon encoded before the typed reports.
        #expect(noted == JSONDocument.encode(["unregistered": "a", "note": "n"]))
    }

    @Test("a pasteboard report never shows a protected pasteboard's types or sizes, and round-trips")
    func pasteboardReport() throws {
        let open = PasteboardReport(PasteboardSnapshot(name: "general", changeCount: 3, items: [PasteboardItem(type: "public.utf8-plain-text", data: Array("hello".utf8))], expiresInSeconds: 9))
        #expect(open.items == [.init(type: "public.utf8-plain-text", bytes: 5)])
        #expect(open.bytes == 5)
        let closed = PasteboardReport(PasteboardSnapshot(name: "s", changeCount: 1, items: [PasteboardItem(type: "public.data", data: [1, 2, 3])], persistent: true, passwordProtected: true))
        #expect(closed.items.isEmpty && closed.bytes == 0 && closed.passwordProtected)
        for report in [open, closed] {
            let decoded = try JSONDecoder().decode(PasteboardReport.self, from: Data(JSONDocument.encode(report).utf8))
            #expect(decoded == report)
        }
    }

    @Test("register's answer is the app's report under \"registered\"")
    func registerReport() throws {
        let app = AppReport(id: "a.b", name: "B", path: "/apps/b.app", executable: "b", schemes: ["b"], queriesSchemes: [])
        let text = JSONDocument.encode(RegisterReport(registered: app))
        #expect(text.hasPrefix("{\n  \"heldByOthers\" : [\n\n  ],\n  \"registered\" : {\n"), "\(text)")
        #expect(try JSONDecoder().decode(RegisterReport.self, from: Data(text.utf8)).registered == app)
    }
}
