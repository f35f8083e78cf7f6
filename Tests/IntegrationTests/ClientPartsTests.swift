import LaunchServicesClient
import LaunchServicesProtocol
import Testing

/// The client library's small parts, without a daemon (the integration target is the one
/// that links LaunchServicesClient).
@Suite("Client parts: request ids and set-aside frames")
struct ClientPartsTests {
    @Test("request ids count from 1 and skip 0 when they wrap")
    func ids() {
        var ids = RequestIDs()
        #expect(ids.next == 1)
        #expect(ids.take() == 1)
        #expect(ids.take() == 2)
        var top = RequestIDs(next: UInt32.max - 1)
        #expect(top.take() == UInt32.max - 1)
        #expect(top.take() == UInt32.max)
        #expect(top.take() == 1, "0 is never a request id")
        #expect(RequestIDs(next: 0).next == 1)
    }

    @Test("frames set aside come back in order; past the limit it is a protocol violation")
    func setAside() throws {
        var frames = SetAsideFrames(maximum: 2)
        try frames.append(Envelope(id: 1, .query(topic: "a")))
        try frames.append(Envelope(id: 2, .query(topic: "b")))
        #expect(throws: ClientError.self) { try frames.append(Envelope(id: 3, .query(topic: "c"))) }
        #expect(frames.removeFirst()?.id == 1)
        #expect(frames.removeFirst()?.id == 2)
        #expect(frames.removeFirst() == nil)
        #expect(frames.isEmpty)
    }
}
