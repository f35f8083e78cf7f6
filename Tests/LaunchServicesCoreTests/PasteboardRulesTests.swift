import LaunchServicesCore
import Testing

/// The pasteboard rules, driven directly: change counts, types, expiry, limits (passwords:
/// `PasteboardPasswordRulesTests`).
@Suite("Pasteboard rules")
struct PasteboardRulesTests {
    func text(_ s: String) -> [PasteboardItem] { [PasteboardItem(text: s)] }

    @Test("copy, paste and clear; the change count goes up with every change, not with reads")
    func changeCount() throws {
        var boards = Pasteboards()
        #expect(try boards.apply(PasteboardRequest(.copy, items: text("a")), now: 100).snapshot.changeCount == 1)
        let pasted = try boards.apply(PasteboardRequest(.paste), now: 100)
        #expect(pasted.snapshot.name == "general")
        #expect(pasted.snapshot.items == text("a"))
        #expect(pasted.snapshot.changeCount == 1)
        #expect(pasted.changed == nil, "a read changes nothing")
        #expect(try boards.apply(PasteboardRequest(.copy, items: text("b")), now: 100).snapshot.changeCount == 2)
        let cleared = try boards.apply(PasteboardRequest(.clear), now: 100)
        #expect(cleared.snapshot.changeCount == 3)
        #expect(cleared.changed?.items == [])
        #expect(try boards.apply(PasteboardRequest(.paste), now: 100).snapshot.items.isEmpty)
    }

    @Test("named pasteboards are separate from the general one")
    func named() throws {
        var boards = Pasteboards()
        _ = try boards.apply(PasteboardRequest(.copy, name: "test1", items: text("x")), now: 0)
        #expect(try boards.apply(PasteboardRequest(.paste), now: 0).snapshot.items.isEmpty)
        #expect(try boards.apply(PasteboardRequest(.paste, name: "test1"), now: 0).snapshot.items == text("x"))
        #expect(boards.list(now: 0).map(\.name) == ["test1"])
    }

    @Test("type conformance: text finds plain text and JSON, data finds anything, no match is an error")
    func types() throws {
        #expect(PasteboardType.conforms("public.utf8-plain-text", to: "public.text"))
        #expect(PasteboardType.conforms("public.json", to: "public.text"))
        #expect(PasteboardType.conforms("com.example.custom", to: "public.data"))
        #expect(!PasteboardType.conforms("public.data", to: "public.text"))
        #expect(!PasteboardType.conforms("public.json", to: "public.utf8-plain-text"))
        var boards = Pasteboards()
        _ = try boards.apply(PasteboardRequest(.copy, items: [PasteboardItem(type: "public.json", data: Array("[1]".utf8)), PasteboardItem(type: "public.data", data: [0xFF])]), now: 0)
        #expect(try boards.apply(PasteboardRequest(.paste, type: "public.text"), now: 0).snapshot.items.map(\.type) == ["public.json"])
        #expect(throws: PasteboardError(.invalidRequest, "pasteboard 'general' has no item of type public.png; it holds public.data, public.json")) {
            try boards.apply(PasteboardRequest(.paste, type: "public.png"), now: 0)
        }
    }

    @Test("bad names, types, text and expiry are refused, and a refusal changes nothing")
    func badInput() throws {
        var boards = Pasteboards()
        for (request, words) in [
            (PasteboardRequest(.copy, name: "", items: text("x")), "the pasteboard name is empty"),
            (PasteboardRequest(.copy, name: "a\u{7}b", items: text("x")), "contains a control character"),
            (PasteboardRequest(.copy, name: String(repeating: "n", count: 129), items: text("x")), "longer than 128 bytes"),
            (PasteboardRequest(.copy, items: [PasteboardItem(type: "plain", data: [1])]), "'plain' is not a type identifier"),
            (PasteboardRequest(.copy, items: [PasteboardItem(type: "public.utf8-plain-text", data: [0xC3])]), "is not valid UTF-8"),
            (PasteboardRequest(.copy, items: []), "nothing to copy"),
            (PasteboardRequest(.copy, items: text("x"), expireSeconds: 0), "out of range"),
        ] {
            let error = #expect(throws: PasteboardError.self) { try boards.apply(request, now: 0) }
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "") should say \(words)")
            #expect(error?.code == .invalidRequest)
        }
        #expect(boards.boards.isEmpty)
    }

    @Test("limits: bytes per pasteboard, pasteboards in use, bytes overall, items")
    func limits() throws {
        var boards = Pasteboards(limits: PasteboardLimits(maximumBytes: 100, maximumTotalBytes: 150, maximumPasteboards: 2, maximumItems: 2))
        let big = [PasteboardItem(type: "public.data", data: Array(repeating: 1, count: 80))]
        #expect(throws: PasteboardError.self) { try boards.apply(PasteboardRequest(.copy, items: [PasteboardItem(type: "public.data", data: Array(repeating: 1, count: 101))]), now: 0) }
        _ = try boards.apply(PasteboardRequest(.copy, name: "a", items: big), now: 0)
        let overall = #expect(throws: PasteboardError.self) { try boards.apply(PasteboardRequest(.copy, name: "b", items: big), now: 0) }
        #expect(overall?.message.contains("all pasteboards together would hold 182 bytes; the limit is 150") == true)
        _ = try boards.apply(PasteboardRequest(.copy, name: "b", items: text("x")), now: 0)
        let count = #expect(throws: PasteboardError.self) { try boards.apply(PasteboardRequest(.copy, name: "c", items: text("y")), now: 0) }
        #expect(count?.message.contains("2 pasteboards already hold items") == true)
        _ = try boards.apply(PasteboardRequest(.copy, name: "a", items: text("replacing a is fine")), now: 0)
        #expect(throws: PasteboardError.self) { try boards.apply(PasteboardRequest(.copy, name: "a", items: text("1") + text("2") + text("3")), now: 0) }
    }

    @Test("expiry: the items go at their time, as a change; the remaining time is reported")
    func expiry() throws {
        var boards = Pasteboards()
        _ = try boards.apply(PasteboardRequest(.copy, name: "e", items: text("x"), expireSeconds: 10, persistent: true), now: 1000)
        #expect(try boards.apply(PasteboardRequest(.paste, name: "e"), now: 1004).snapshot.expiresInSeconds == 6)
        let expired = try boards.apply(PasteboardRequest(.paste, name: "e"), now: 1010)
        #expect(expired.snapshot.items.isEmpty)
        #expect(expired.snapshot.changeCount == 2)
        #expect(expired.changed?.items == [], "the store hears about it")
        _ = try boards.apply(PasteboardRequest(.copy, name: "f", items: text("y"), expireSeconds: 5), now: 2000)
        #expect(boards.expireAll(now: 2004).isEmpty)
        #expect(boards.expireAll(now: 2005).map(\.name) == ["f"])
        #expect(boards.expireAll(now: 2006).isEmpty, "expires once")
    }

    @Test("emptied pasteboards are not kept without bound")
    func emptiedPruned() throws {
        var boards = Pasteboards(limits: PasteboardLimits(maximumPasteboards: 2))
        for i in 0..<10 {
            _ = try boards.apply(PasteboardRequest(.copy, name: "n\(i)", items: text("x")), now: 0)
            _ = try boards.apply(PasteboardRequest(.clear, name: "n\(i)"), now: 0)
        }
        _ = try boards.apply(PasteboardRequest(.copy, name: "kept", items: text("x")), now: 0)
        #expect(boards.boards.count <= 5)
        #expect(boards.boards["kept"]?.items == text("x"))
    }
}
