import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Byte builders and decoders shared by the protocol tests.
enum ProtocolBytes {
    /// A frame body: kind, request id, then whatever `build` writes.
    static func body(_ kind: UInt8, id: UInt32 = 7, _ build: (inout WireWriter) -> Void = { _ in }) -> [UInt8] {
        var w = WireWriter()
        w.u8(kind)
        w.u32(id)
        build(&w)
        return w.bytes
    }

    /// A raw field: tag, big-endian length, payload.
    static func field(_ tag: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [tag] + bigEndian(UInt32(payload.count)) + payload
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    /// The error decoding `body` throws, or `nil` when it decodes.
    static func decodeError(_ body: [UInt8]) -> WireError? {
        do {
            _ = try Envelope.decode(body)
            return nil
        } catch {
            return error
        }
    }

    /// Frame.encode, then the frame's own length prefix checked and stripped, then decoded
    /// both from an array and from a raw buffer.
    static func roundTrip(_ envelope: Envelope, sourceLocation: SourceLocation = #_sourceLocation) throws -> Envelope {
        let frame = Frame.encode(envelope)
        let body = Array(frame.dropFirst(Frame.headerLength))
        #expect(Array(frame.prefix(Frame.headerLength)) == bigEndian(UInt32(body.count)), "length prefix", sourceLocation: sourceLocation)
        #expect(body.first == envelope.message.kind, "kind byte", sourceLocation: sourceLocation)
        #expect(Array(body.dropFirst().prefix(4)) == bigEndian(envelope.id), "request id", sourceLocation: sourceLocation)
        let declared = try frame.withUnsafeBytes { try Frame.declaredLength($0, limit: Frame.defaultMaximumLength) }
        #expect(declared == body.count, sourceLocation: sourceLocation)
        let fromBuffer = try body.withUnsafeBytes { try Envelope.decode($0) }
        let fromArray = try Envelope.decode(body)
        #expect(fromBuffer == fromArray, sourceLocation: sourceLocation)
        return fromArray
    }

    /// `value` nested inside `levels` one-element arrays.
    static func nestedArrays(_ levels: Int, around value: PropertyListValue = .string("leaf")) -> PropertyListValue {
        var v = value
        for _ in 0..<levels { v = .array([v]) }
        return v
    }

    /// `value` nested inside `levels` one-entry dictionaries.
    static func nestedDictionaries(_ levels: Int, around value: PropertyListValue = .integer(1)) -> PropertyListValue {
        var v = value
        for _ in 0..<levels { v = .dictionary([("k", v)]) }
        return v
    }
}

/// Report documents as the daemon writes them, for the report tests.
enum ReportSamples {
    /// The daemon's encoder settings (LaunchServicesDaemon/Reports.swift, `JSONDocument`).
    static func daemonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `text`, a sample in the daemon's format, decodes to `expected` and encodes back to
    /// exactly `text`.
    static func decode<R: Codable & Equatable>(_ type: R.Type, _ text: String, expected: R,
                                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let decoded = try JSONDecoder().decode(R.self, from: Data(text.utf8))
        #expect(decoded == expected, sourceLocation: sourceLocation)
        #expect(try daemonText(decoded) == text, sourceLocation: sourceLocation)
    }
}
