import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// The messages of returning control and of the pasteboards survive encoding exactly.
@Suite("Callback and pasteboard messages")
struct CallbackAndPasteboardMessageTests {
    typealias B = ProtocolBytes

    @Test("open with returnTo, awaitCallback, callbackAddress, callback, deliver with a warning")
    func callbackMessages() throws {
        for message: Message in [
            .open(url: "a://b", annotation: nil, returnTo: "com.example.caller"),
            .open(url: "a://b", annotation: .string("n")),
            .awaitCallback,
            .callbackAddress(url: "x-lsopen-callback://0011"),
            .callback(url: "x-lsopen-callback://0011/success?word=olleh", sourceApplication: "com.example.wordrev"),
            .deliver(Delivery(url: "a://b", sourceApplication: "s", warning: "the x-success callback is not the caller's")),
        ] {
            #expect(try B.roundTrip(Envelope(id: 9, message)).message == message)
        }
        #expect(Message.awaitCallback.kind == 0x14)
        #expect(Message.callbackAddress(url: "").kind == 0x15)
        #expect(Message.callback(url: "", sourceApplication: "").kind == 0x16)
    }

    @Test("pasteboard requests and results, binary data and every optional field")
    func pasteboardMessages() throws {
        let binary = PasteboardItem(type: "public.data", data: [0, 1, 0xFF, 0x80])
        let request = PasteboardRequest(.copy, name: "test1", items: [PasteboardItem(text: "hi\n"), binary], password: "pw", expireSeconds: 1500, persistent: true)
        #expect(try B.roundTrip(Envelope(id: 1, .pasteboard(request))).message == .pasteboard(request))
        let paste = PasteboardRequest(.paste, type: "public.text")
        #expect(try B.roundTrip(Envelope(id: 2, .pasteboard(paste))).message == .pasteboard(paste))
        let result = PasteboardSnapshot(name: "general", changeCount: 42, items: [binary], expiresInSeconds: 7, persistent: true, passwordProtected: true)
        #expect(try B.roundTrip(Envelope(id: 3, .pasteboardResult(result))).message == .pasteboardResult(result))
        let empty = PasteboardSnapshot(name: "n", changeCount: 0, items: [])
        #expect(try B.roundTrip(Envelope(id: 4, .pasteboardResult(empty))).message == .pasteboardResult(empty))
    }

    @Test("malformed pasteboard messages name what is wrong")
    func malformed() {
        #expect(B.decodeError(B.body(0x40) { $0.field(1, string: "steal") }) == .invalid("operation", "unknown value 'steal'"))
        #expect(B.decodeError(B.body(0x40) {
            $0.field(1, string: "copy")
            $0.nested(3) { $0.field(1, string: "public.data") }
        }) == .missingField(kind: "pasteboard", field: "item.data"))
        #expect(B.decodeError(B.body(0x41) { $0.field(1, string: "n") }) == .missingField(kind: "pasteboardResult", field: "changeCount"))
        #expect(B.decodeError(B.body(0x16) { $0.field(1, string: "u") }) == .missingField(kind: "callback", field: "sourceApplication"))
    }
}
