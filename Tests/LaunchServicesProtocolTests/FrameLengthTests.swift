import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// `Frame.declaredLength`: the length prefix, validated before any of the body is buffered.
@Suite("Frame length prefix")
struct FrameLengthTests {
    func declared(_ bytes: [UInt8], limit: Int = Frame.defaultMaximumLength) throws -> Int? {
        try bytes.withUnsafeBytes { try Frame.declaredLength($0, limit: limit) }
    }

    func refusal(_ bytes: [UInt8], limit: Int = Frame.defaultMaximumLength) -> WireError? {
        do {
            _ = try declared(bytes, limit: limit)
            return nil
        } catch let error as WireError {
            return error
        } catch {
            Issue.record("not a WireError: \(error)")
            return nil
        }
    }

    @Test("the constants of the framing")
    func constants() {
        #expect(Frame.headerLength == 4)
        #expect(Frame.minimumBodyLength == 5)
        #expect(Frame.defaultMaximumLength == 1_048_576)
        #expect(Frame.protocolVersion == 1)
    }

    @Test("fewer than four bytes: not known yet", arguments: [[UInt8](), [0], [0, 0], [0xFF, 0xFF, 0xFF]])
    func incomplete(bytes: [UInt8]) throws {
        #expect(try declared(bytes) == nil)
    }

    @Test("an empty frame is refused")
    func empty() throws {
        let error = try #require(refusal([0, 0, 0, 0]))
        #expect(error == .emptyFrame)
        #expect(error.description == "empty frame: a frame holds at least a kind byte and a request id")
    }

    @Test("a frame shorter than kind + request id is refused", arguments: [1, 2, 3, 4])
    func tooShort(length: UInt8) throws {
        let error = try #require(refusal([0, 0, 0, length]))
        #expect(error == .truncated("frame of \(length) bytes is shorter than a kind byte and a request id"))
    }

    @Test("the smallest frame, and the prefix is big-endian; bytes after the prefix are not looked at")
    func valid() throws {
        #expect(try declared([0, 0, 0, 5]) == 5)
        #expect(try declared([0, 0, 0, 5, 0xFF, 0xFF]) == 5)
        #expect(try declared([0, 0, 1, 0]) == 256)
        #expect(try declared([0, 1, 0, 0]) == 65_536)
        #expect(try declared([0, 0x10, 0, 0]) == Frame.defaultMaximumLength)
    }

    @Test("exactly the limit is accepted; one byte more is refused")
    func limit() throws {
        #expect(try declared([0, 0, 0, 100], limit: 100) == 100)
        #expect(refusal([0, 0, 0, 101], limit: 100) == .frameTooLarge(length: 101, limit: 100))
        #expect(refusal([0, 0x10, 0, 1]) == .frameTooLarge(length: Frame.defaultMaximumLength + 1, limit: Frame.defaultMaximumLength))
    }

    @Test("the largest declarable length is refused, not wrapped")
    func largest() throws {
        let error = try #require(refusal([0xFF, 0xFF, 0xFF, 0xFF]))
        #expect(error == .frameTooLarge(length: 4_294_967_295, limit: Frame.defaultMaximumLength))
        #expect(error.description == "frame of 4294967295 bytes exceeds the limit of 1048576 bytes")
        #expect(refusal([0x80, 0, 0, 0]) == .frameTooLarge(length: 0x8000_0000, limit: Frame.defaultMaximumLength), "the top bit is not a sign")
    }

    @Test("every encoded frame declares its own body length")
    func encodedFramesDeclareTheirLength() throws {
        for message in [Message.notify(.didEnterBackground), .queryResult(json: String(repeating: "j", count: 5_000)), .command(verb: "v", arguments: ["a", "b"])] {
            let frame = Frame.encode(Envelope(id: 1, message))
            #expect(try declared(frame) == frame.count - Frame.headerLength)
        }
    }
}
